// The address parser the SSRF policy decides on (domain/net/ipAddress.ts), checked against
// Node's own parsing and the WHATWG URL serializer: it must read every form they read as the
// same bytes, print RFC 5952 text, and refuse what is not an address instead of guessing.
import t from 'tap'
import { isIP } from 'node:net'
import { formatIPv6, parseIp, parseIPv4, parseIPv6 } from '../domain/net/ipAddress.ts'
import { classifyAddress, parseAllowEntry } from '../domain/net/addressPolicy.ts'
import { loadConfig } from '../app/config.ts'

t.test('equivalent spellings are one address', async (t) => {
  const same: [string, string][] = [
    ['::ffff:127.0.0.1', '::ffff:7f00:1'],
    ['0:0:0:0:0:ffff:7f00:1', '::ffff:7f00:1'],
    ['0000:0000:0000:0000:0000:FFFF:7F00:0001', '::ffff:7f00:1'],
    ['[::1]', '::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:102:304'],
    ['1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0'],
    ['::2:3:4:5:6:7:8', '0:2:3:4:5:6:7:8'],
    ['::127.0.0.1', '::7f00:1'],
  ]
  for (const [a, b] of same) t.same(parseIPv6(a), parseIPv6(b), `${a} = ${b}`)
})

t.test('what is not an address is refused, never guessed', async (t) => {
  for (const bad of ['', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1.2.3.256', '0x7f.0.0.1', '2130706433', ' 1.2.3.4', ':::', '1:::2', '1::2::3', '12345::', 'g::', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7::8', '::1.2.3', '::1.2.3.4:5', 'fe80::1%', 'localhost', '[::1']) {
    t.equal(parseIp(bad), null, JSON.stringify(bad))
    t.equal(classifyAddress(bad).class, 'not-an-address', 'and a non-address is never public')
  }
})

t.test('agrees with Node and with the URL serializer on random addresses', async (t) => {
  let seed = 7
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff
  for (let n = 0; n < 2000; n++) {
    const b = Uint8Array.from({ length: 16 }, () => (rnd() < 110 ? 0 : rnd()))
    const text = formatIPv6(b)
    t.equal(isIP(text), 6, text)
    t.equal(new URL(`http://[${text}]/`).hostname, `[${text}]`, 'RFC 5952 text, as the URL parser prints it')
    t.same(parseIPv6(text), b)
    if (n % 100 === 0) t.same(parseIPv6(text.toUpperCase()), b)
  }
  for (let n = 0; n < 500; n++) {
    const v4 = `${rnd()}.${rnd()}.${rnd()}.${rnd()}`
    t.equal(isIP(v4), 4)
    t.same(parseIPv4(v4), Uint8Array.from(v4.split('.').map(Number)))
  }
})

t.test('allowlist entries: names, ports, addresses and CIDRs; anything else stops the service at start', async (t) => {
  t.match(parseAllowEntry('Intranet.Example.org.'), { kind: 'name', name: 'intranet.example.org', port: null })
  t.match(parseAllowEntry('localhost:8080'), { kind: 'name', name: 'localhost', port: 8080 })
  t.match(parseAllowEntry('10.0.0.0/8'), { kind: 'net', bits: 8 })
  t.match(parseAllowEntry('fd00::/8'), { kind: 'net', bits: 8 })
  t.match(parseAllowEntry('[::1]:3000'), { kind: 'net', bits: 128, port: 3000 })
  t.match(parseAllowEntry('127.0.0.1:3000'), { kind: 'net', bits: 32, port: 3000 })
  for (const bad of ['10.0.0.0/33', 'a b', 'http://x', 'x:99999', '*.example.org']) t.equal(parseAllowEntry(bad), null, bad)
  t.throws(() => loadConfig({ DATA_DIR: '/tmp/x', IMPORT_ALLOW_HOSTS: 'ok.example, http://bad' }), /http:\/\/bad/)
  t.throws(() => loadConfig({ DATA_DIR: '/tmp/x', WEBHOOK_ALLOW_HOSTS: '10.0.0.0/99' }), /10\.0\.0\.0\/99/)
})
