/**
 * How both stores encode values with msgpackr: plain maps, no records, variable map sizes.
 *
 * Records (msgpackr's inline key lists) are off since schema version 3: writing and reading a definition per value
 * cost about half a microsecond each way per record, several records per event. Without them an object and a `Map`
 * are the same msgpack map, and both read back as plain objects. `variableMapSize` lets an object hold more than
 * 65,535 keys (a client can send one). Values written as records (schema version 2) still decode.
 */
export const MSGPACK_VALUE_OPTIONS = { useRecords: false, mapsAsObjects: true, variableMapSize: true } as const;
