// The stack's load balancer (deploy/haproxy.cfg, service `lb`) run here with HAProxy from the
// Debian archive (scripts/system-deps.sh), in front of stand-in API replicas on loopback addresses
// of their own, and a small DNS server answering for `api` as Docker's DNS does for a scaled
// service (one A record per replica). Only what cannot exist outside Docker is swapped: the
// nameserver address, the replicas' port, the listen addresses. What `docker-compose up --scale
// api=N` relies on is checked: replicas that appear in DNS get traffic without a reload, ones that
// leave stop getting it, a request that reached a replica is never sent to a second, and clients
// are named in X-Forwarded-For.
import t from 'tap'
import { spawn } from 'node:child_process'
import { createSocket } from 'node:dgram'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer as createHttpServer, type Server } from 'node:http'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tempDir } from './support/tmp.ts'
import { pollUntil } from './support/pollUntil.ts'
import { freePort } from './support/ports.ts'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))

/** Answers A queries for `name` with `addresses()` (TTL 1 s), NXDOMAIN for other names, no records for other types. */
function dnsServer(name: string, addresses: () => string[]) {
  const socket = createSocket('udp4')
  socket.on('message', (q, from) => {
    // The question: labels from byte 12 up to the zero byte, then type and class.
    let i = 12
    const labels: string[] = []
    while (q[i]! !== 0) {
      labels.push(q.subarray(i + 1, i + 1 + q[i]!).toString('ascii'))
      i += q[i]! + 1
    }
    const question = q.subarray(12, i + 5)
    const type = q.readUInt16BE(i + 1)
    const known = labels.join('.').toLowerCase() === name
    const answers = known && type === 1 ? addresses() : []
    const header = Buffer.alloc(12)
    header.writeUInt16BE(q.readUInt16BE(0), 0)
    header.writeUInt16BE(0x8180 | (known ? 0 : 3), 2) // response, recursion desired and available; rcode 3: NXDOMAIN
    header.writeUInt16BE(1, 4)
    header.writeUInt16BE(answers.length, 6)
    const records = answers.map((ip) => {
      const r = Buffer.alloc(16)
      r.writeUInt16BE(0xc00c, 0) // the name: a pointer to the question's
      r.writeUInt16BE(1, 2)
      r.writeUInt16BE(1, 4)
      r.writeUInt32BE(1, 6)
      r.writeUInt16BE(4, 10)
      ip.split('.').forEach((b, k) => r.writeUInt8(Number(b), 12 + k))
      return r
    })
    socket.send(Buffer.concat([header, question, ...records]), from.port, from.address)
  })
  return new Promise<{ port: number; close: () => void }>((done) => socket.bind(0, '127.0.0.1', () => done({ port: socket.address().port, close: () => socket.close() })))
}

/** A stand-in API replica on its own loopback address: /healthz, and every other request answered with who served it. */
function replica(ip: string, port: number, seen: { posts: number }) {
  const server: Server = createHttpServer((req, res) => {
    if (req.url === '/healthz') return void res.end('{"status":"ok"}')
    if (req.method === 'POST') {
      seen.posts++
      // Reached, then the connection drops without an answer: the request may have been acted on.
      return void req.socket.destroy()
    }
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ replica: ip, forwardedFor: req.headers['x-forwarded-for'] ?? null }))
  })
  return new Promise<Server>((done) => server.listen(port, ip, () => done(server)))
}

t.test('given lb in front of api replicas found through DNS, when replicas come and go, then traffic follows them without a reload, and a request is never sent twice', async (t) => {
  const tmp = tempDir()
  t.teardown(tmp.remove)
  let inDns = ['127.0.0.2']
  const dns = await dnsServer('api', () => inDns)
  t.teardown(dns.close)
  const apiPort = await freePort()
  const [restPort, mcpPort] = [await freePort(), await freePort()]
  const cfg = readFileSync(join(root, 'deploy/haproxy.cfg'), 'utf8')
  const local = cfg
    .replace('/usr/local/etc/haproxy/errors/503.http', join(root, 'deploy/errors/503.http'))
    .replace('nameserver dns 127.0.0.11:53', `nameserver dns 127.0.0.1:${dns.port}`)
    .replace(/api:3000/g, `api:${apiPort}`)
    .replace(/port 3000\b/g, `port ${apiPort}`)
    .replace(/^\s*bind :3000$/m, `  bind 127.0.0.1:${restPort}`)
    .replace(/^\s*bind :3001$/m, `  bind 127.0.0.1:${mcpPort}`)
  t.not(local.indexOf(`nameserver dns 127.0.0.1:${dns.port}`), -1, "the configuration names Docker's DNS where the test puts its own")
  const file = join(tmp.dir, 'haproxy.cfg')
  writeFileSync(file, local)

  const seen = { two: { posts: 0 }, three: { posts: 0 } }
  const two = await replica('127.0.0.2', apiPort, seen.two)
  const three = await replica('127.0.0.3', apiPort, seen.three)
  t.teardown(() => {
    two.close()
    three.close()
  })
  const lb = spawn('haproxy', ['-db', '-f', file], { stdio: 'ignore' })
  t.teardown(() => void lb.kill('SIGKILL'))

  const who = async () => {
    const r = await fetch(`http://127.0.0.1:${restPort}/v1/notes`).catch(() => null)
    if (!r || r.status !== 200) return null
    return (await r.json()) as { replica: string; forwardedFor: string | null }
  }
  const servedBy = async (n: number) => {
    const out = new Set<string>()
    for (let i = 0; i < n; i++) {
      const w = await who()
      out.add(w ? w.replica : 'error')
    }
    return [...out].sort()
  }

  const first = await pollUntil('the first replica is found and checked', who, 20_000, 100)
  t.equal(first.replica, '127.0.0.2')
  t.equal(first.forwardedFor, '127.0.0.1', "the client's address is forwarded (TRUST_PROXY=1 reads it)")

  // `--scale api=2`: a second record appears.
  inDns = ['127.0.0.2', '127.0.0.3']
  const both = await pollUntil('the new replica gets traffic without a reload', async () => ((await servedBy(6)).join() === '127.0.0.2,127.0.0.3' ? true : null), 30_000, 200)
  t.ok(both, 'requests are spread over both')

  // A POST that reaches a replica and gets no answer is not sent to the other one.
  const before = seen.two.posts + seen.three.posts
  // HAProxy answers 502, or (on a kept-alive client connection) closes it as the replica did.
  const post = await fetch(`http://127.0.0.1:${restPort}/v1/notes`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).then(
    (r) => r.status,
    () => 'closed',
  )
  t.ok(post === 502 || post === 'closed', `the client is told the request failed (${post})`)
  t.equal(seen.two.posts + seen.three.posts - before, 1, 'and only one replica ever saw it')

  // Scaled back down: the record goes, and the replica with it.
  inDns = ['127.0.0.3']
  two.close()
  await pollUntil('only the remaining replica serves', async () => ((await servedBy(6)).join() === '127.0.0.3' ? true : null), 30_000, 200)
  t.same(await servedBy(10), ['127.0.0.3'], 'no request fails or goes to the replica that left')
})
