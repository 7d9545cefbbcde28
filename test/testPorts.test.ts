// The ports tests hand to the processes they start (test/support/ports.ts). A port the kernel
// gave for port 0 and the test released could be taken, before `npm start` listened on it, as the
// local port of another test's outgoing connection: EADDRINUSE on CI. The ports now come from
// below the kernel's ephemeral range, where outgoing connections never get theirs.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { freePort, freePorts } from './support/ports.ts'

const ephemeralLow = (): number => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
  } catch {
    return 32_768
  }
}

const listenOn = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(port, '127.0.0.1', () => resolve(srv))
  })

t.test('given the kernel ephemeral range, when a test asks for ports, then they lie below it, differ, and can be listened on', async (t) => {
  const low = ephemeralLow()
  const ports = await freePorts(8)
  t.equal(new Set(ports).size, 8, 'eight different ports')
  for (const port of [...ports, await freePort()]) {
    t.ok(port >= 1024 && port < low, `${port} is below the ephemeral range (from ${low})`)
    const srv = await listenOn(port)
    await new Promise((r) => srv.close(r))
  }
})

t.test('given a port in use, when a test asks for ports, then it never gets that one', async (t) => {
  // Every port of the band but a few taken is too many to hold here; instead: a taken port is
  // refused by the pick (it listens first), so many picks never return one that is held.
  const taken = await freePorts(20)
  const held = await Promise.all(taken.map(listenOn))
  t.teardown(() => Promise.all(held.map((srv) => new Promise((r) => srv.close(r)))))
  const picked = await freePorts(200)
  t.notOk(picked.some((p) => taken.includes(p)), 'no held port handed out')
})
