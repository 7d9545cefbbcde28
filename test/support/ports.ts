// Ports a test can listen on, found free and released for the process under test.
//
// Picked below the kernel's ephemeral range (32768–60999 here), not asked of it with port 0: a
// port the kernel hands out for port 0 is one it also hands out as the local port of outgoing
// connections, and with the suite's many clients (MongoDB, Kafka, S3, HTTP) one took a released
// port before the process under test listened on it (EADDRINUSE from `npm start` on CI). Nothing
// of ours listens on a fixed port in this band (the test servers use 19092–19110 and 27027–27040).
import { createServer, type Server } from 'node:net'

const LOW = 21_000
const HIGH = 27_000

const tryListen = (port: number) =>
  new Promise<Server | null>((resolve) => {
    const srv = createServer()
    srv.once('error', () => resolve(null))
    srv.listen(port, '127.0.0.1', () => resolve(srv))
  })

/** Ports free right now (held together while picked, so they differ). */
export async function freePorts(n: number): Promise<number[]> {
  const held: Server[] = []
  const ports: number[] = []
  while (ports.length < n) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW))
    if (ports.includes(port)) continue
    const srv = await tryListen(port)
    if (srv) (held.push(srv), ports.push(port))
  }
  await Promise.all(held.map((srv) => new Promise((r) => srv.close(r))))
  return ports
}

/** One port free right now. */
export const freePort = async (): Promise<number> => (await freePorts(1))[0]!
