// The environment of a service a test starts as a child process on the embedded default (SQLite,
// embedded read models, local blobs), whatever servers `npm test` started for the integration
// suites: a killed child's MongoDB projection leases, or a Kafka forwarder, must not decide the
// outcome of a test about something else.
export function embeddedEnv(): NodeJS.ProcessEnv {
  const { MONGO_URL: _mongo, MONGO_DB: _db, KAFKA_BROKERS: _kafka, S3_ENDPOINT: _s3, S3_BUCKET: _bucket, ESDB_URL: _esdb, ...rest } = process.env
  return rest
}
