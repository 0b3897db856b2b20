import * as v from "valibot";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "./passwords.js";
import { ROLES } from "./roles.js";

const email = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.toLowerCase(),
  v.maxLength(254, "must be at most 254 characters"),
  v.email("must be an email address"),
);
const displayName = v.pipe(v.string("must be a string"), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(128, "must be at most 128 characters"));
const password = v.pipe(
  v.string("must be a string"),
  v.minLength(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`),
  v.maxLength(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`),
);
const role = v.picklist(ROLES, "must be owner, editor or viewer");

/** `POST /admin/members`; `name` defaults to the part of the email before the @. */
export const CreateMemberBody = v.strictObject(
  { email, name: v.optional(displayName), role, password },
  "must be an object with only: email, name, role, password",
);

/** `PATCH /admin/members/:memberId`: at least one field. */
export const UpdateMemberBody = v.pipe(
  v.strictObject({ name: v.optional(displayName), role: v.optional(role), password: v.optional(password) }, "must be an object with only: name, role, password"),
  v.check((input) => input.name !== undefined || input.role !== undefined || input.password !== undefined, "must change at least one of: name, role, password"),
);

/**
 * `POST /admin/session`. Both fields are any bounded string: a malformed email is a wrong email, answered like a
 * wrong password (a failure never says which part was wrong).
 */
export const SignInBody = v.strictObject(
  {
    email: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`)),
    password: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`)),
  },
  "must be an object with only: email, password",
);

/** `POST /admin/password-reset`: the one-time token from the reset link and the new password. */
export const CompleteResetBody = v.strictObject(
  { token: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(256, "must be at most 256 characters")), password },
  "must be an object with only: token, password",
);

/** `POST /admin/tokens`. */
export const CreateTokenBody = v.strictObject(
  { name: displayName, readOnly: v.optional(v.boolean("must be a boolean"), false) },
  "must be an object with only: name, readOnly",
);
