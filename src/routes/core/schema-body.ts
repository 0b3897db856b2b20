import * as v from "valibot";
import { parseOrThrow } from "../../schemas/issues.js";
import { parseJsonBody } from "../../schemas/json-body.js";
import type { ApiRequest } from "../../http/types.js";

/** A JSON body checked against its schema: the contract's 400s for anything a client got wrong. */
export function schemaBody<TSchema extends v.GenericSchema>(request: ApiRequest, schema: TSchema): v.InferOutput<TSchema> {
  return parseOrThrow(v.safeParse, schema, parseJsonBody(request.body, request.headers["content-type"]));
}
