// The analytics-publisher port: hands messages to a log broker (Kafka in production, see
// adapters/kafka/kafkaPublisher.ts) for downstream analytics. The forwarder projection
// (projections/analyticsForwarder.ts) is its only writer.

export interface AnalyticsMessage {
  topic: string
  /** Partitioning key: messages with the same topic and key keep their relative order. */
  key: string
  /** The payload (JSON text for the forwarder). */
  value: string
  headers?: Readonly<Record<string, string>>
}

/**
 * Where the forwarder keeps its position: with what it published (Kafka: a compacted topic of its
 * own), not in the read-model store, so losing the read models re-publishes nothing, and losing
 * the broker's data loses the position with the messages it stood for (docs/health-and-recovery.md).
 */
export interface PublishedCheckpoints {
  /** The position saved under `name`, or null when none was. */
  read(name: string): Promise<number | null>
  /** Saves `position` under `name`, acknowledged like a publish; after the messages it covers. */
  save(name: string, position: number): Promise<void>
}

export interface AnalyticsPublisher {
  /** Present when the broker keeps the forwarder's checkpoint. */
  checkpoints?: PublishedCheckpoints
  /**
   * Publishes the messages and resolves only once the broker has acknowledged every one of them
   * (written to all in-sync replicas: acks=all). Messages with the same topic and key are
   * written in array order. Rejects when any message could not be confirmed; some of them may
   * have been written anyway, so a caller that retries the batch gets at-least-once delivery.
   */
  publish(messages: readonly AnalyticsMessage[]): Promise<void>
  close(): Promise<void>
}
