// fastify's trustProxy from the TRUST_PROXY / MCP_TRUST_PROXY setting: false (clients connect
// directly; X-Forwarded-For is ignored, so nobody can pick the address a limit counts), true
// (trust every hop), a hop count, or addresses/CIDRs. Behind a load balancer without it, every
// client has the balancer's address and shares one sign-in and demo bucket.
export type TrustProxySetting = boolean | number | string

/** The setting as fastify takes it; a hop count becomes the function it stands for. */
export const fastifyTrustProxy = (t: TrustProxySetting): boolean | string | ((address: string, hop: number) => boolean) =>
  typeof t === 'number' ? (_address, hop) => hop < t : t

/** Parses the environment's text: '' or 'false' → false, 'true' → true, digits → hops, else addresses. */
export const parseTrustProxy = (text: string | undefined): TrustProxySetting => {
  const t = (text ?? '').trim()
  return t === '' || t === 'false' ? false : t === 'true' ? true : /^\d+$/.test(t) ? Number(t) : t
}
