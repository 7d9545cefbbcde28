// Name resolution, so link checks (SSRF) see the addresses a download would really connect to.
export interface HostResolver {
  /** Every address the name resolves to; rejects when it does not resolve. */
  resolve(hostname: string): Promise<string[]>
}
