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

export interface AnalyticsPublisher {
  /**
   * Publishes the messages and resolves only once the broker has acknowledged every one of them
   * (written to all in-sync replicas: acks=all). Messages with the same topic and key are
   * written in array order. Rejects when any message could not be confirmed; some of them may
   * have been written anyway, so a caller that retries the batch gets at-least-once delivery.
   */
  publish(messages: readonly AnalyticsMessage[]): Promise<void>
  close(): Promise<void>
}
