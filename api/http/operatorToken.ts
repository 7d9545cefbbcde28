// The operator's detail on the public health endpoints: shown only to a request carrying
// `Authorization: Bearer <HEALTH_TOKEN>`. Without the token, /health and /readyz say ok or not
// ready and nothing else: global event positions and lags tell an outsider how busy the service
// is (issue 26). The operator's own health port (app/healthServer.ts) needs no token.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'

const digest = (s: string) => createHash('sha256').update(s).digest()

export function isOperator(req: Pick<FastifyRequest, 'headers'>, token: string | null): boolean {
  if (!token) return false
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')
  return !!m && timingSafeEqual(digest(m[1]!), digest(token))
}
