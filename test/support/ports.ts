// Ports a test can listen on: asked of the OS, then released for the process under test.
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'

/** Ports free right now (held together while picked, so they differ). */
export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: n }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
      const srv = createServer()
      srv.once('error', reject)
      srv.listen(0, '127.0.0.1', () => resolve(srv))
    })),
  )
  const ports = servers.map((srv) => (srv.address() as AddressInfo).port)
  await Promise.all(servers.map((srv) => new Promise((r) => srv.close(r))))
  return ports
}

/** One port free right now. */
export const freePort = async (): Promise<number> => (await freePorts(1))[0]!
