// A Kafka broker of a test's own (scripts/servers/kafka.sh on another port than the suite's), so
// a test can stop and start it without disturbing the other suites' broker. Its data directory
// is kept across a stop and a start, as a real broker's disk is: topics and messages survive.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

export interface OwnKafkaBroker {
  /** `127.0.0.1:<port>` */
  brokers: string[]
  /** Starts the broker and resolves once it serves (kafka.sh waits for "Kafka Server started"). */
  start(): Promise<void>
  /** Controlled shutdown; resolves once the process has exited. */
  stop(): Promise<void>
}

/** The broker on the suite's broker port + `offset` (its KRaft controller on the next port). */
export function ownKafkaBroker(suiteBrokers: string[], offset: number): OwnKafkaBroker {
  const port = Number(suiteBrokers[0]!.split(':').pop()) + offset
  const kafkaSh = (cmd: 'start' | 'stop') =>
    promisify(execFile)('bash', ['scripts/servers/kafka.sh', cmd], {
      env: { ...process.env, KAFKA_PORT: String(port), KAFKA_CONTROLLER_PORT: String(port + 1) },
      timeout: 180_000,
    }).then(() => undefined)
  return { brokers: [`127.0.0.1:${port}`], start: () => kafkaSh('start'), stop: () => kafkaSh('stop') }
}
