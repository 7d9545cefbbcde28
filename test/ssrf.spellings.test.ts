// SSRF: every spelling of an internal address is refused (issue 11, item 1). Each link goes
// through the WHATWG URL parser (which turns decimal, octal, hex and short IPv4 forms into dotted
// quads, and prints IPv6 in hex) and then the check every import, feed, redirect and webhook
// passes (`refusedTarget`), so the table covers what a client can actually send. Public
// addresses, also inside IPv6 embeddings, must still pass, or refusing everything would pass too.
import t from 'tap'
import { refusedTarget } from '../commands/publicTarget.ts'
import { staticResolver } from './support/service.ts'

const resolver = staticResolver({ localhost: ['127.0.0.1', '::1'], 'public.test': ['127.0.0.1'], 'mapped.test': ['::ffff:127.0.0.1'], 'mixed.test': ['93.184.216.34', '::ffff:a9fe:a9fe'] })
const refused = (link: string, allowlist: string[] = []) => refusedTarget(resolver, new URL(link), allowlist)

// [link, what it reaches]
const INTERNAL: [string, string][] = [
  // loopback 127.0.0.1, every way a URL can write it
  ['http://127.0.0.1/', 'loopback'],
  ['http://127.1/', 'loopback, short form'],
  ['http://127.0.1/', 'loopback, short form'],
  ['http://2130706433/', 'loopback, decimal'],
  ['http://0x7f000001/', 'loopback, hex'],
  ['http://0x7f.0.0.1/', 'loopback, hex part'],
  ['http://0x7f.1/', 'loopback, hex short'],
  ['http://0177.0.0.1/', 'loopback, octal part'],
  ['http://017700000001/', 'loopback, octal'],
  ['http://127.000.000.001/', 'loopback, zero-padded'],
  ['http://127.255.255.254/', 'loopback, end of 127/8'],
  ['http://[::1]/', 'IPv6 loopback'],
  ['http://[0:0:0:0:0:0:0:1]/', 'IPv6 loopback, long'],
  ['http://[::ffff:127.0.0.1]/', 'IPv4-mapped, dotted'],
  ['http://[::ffff:7f00:1]/', 'IPv4-mapped, hex'],
  ['http://[0:0:0:0:0:ffff:7f00:1]/', 'IPv4-mapped, long'],
  ['http://[0000:0000:0000:0000:0000:FFFF:7F00:0001]/', 'IPv4-mapped, padded upper case'],
  ['http://[::ffff:0:7f00:1]/', 'IPv4-translated (::ffff:0:0:0/96)'],
  ['http://[::127.0.0.1]/', 'IPv4-compatible, dotted'],
  ['http://[::7f00:1]/', 'IPv4-compatible, hex'],
  ['http://[64:ff9b::7f00:1]/', 'NAT64 well-known prefix'],
  ['http://[64:ff9b::127.0.0.1]/', 'NAT64, dotted'],
  ['http://[64:ff9b:1::7f00:1]/', 'local-use NAT64 (64:ff9b:1::/48)'],
  ['http://[2002:7f00:1::]/', '6to4 of 127.0.0.1'],
  ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'Teredo, client 127.0.0.1 (inverted)'],
  ['http://localhost/', 'a name that resolves to loopback'],
  ['http://mapped.test/', 'a name that resolves to an IPv4-mapped loopback'],
  ['http://mixed.test/', 'a name with one public and one mapped metadata address'],
  // this network: 0.0.0.0 reaches the local host on Linux
  ['http://0/', 'this network, decimal'],
  ['http://0.0.0.0/', 'this network'],
  ['http://[::]/', 'IPv6 unspecified'],
  ['http://[::ffff:0.0.0.0]/', 'IPv4-mapped 0.0.0.0'],
  // private
  ['http://10.0.0.1/', 'private 10/8'],
  ['http://10.1/', 'private, short form'],
  ['http://167772161/', 'private, decimal'],
  ['http://0xa000001/', 'private, hex'],
  ['http://012.0.0.1/', 'private, octal part'],
  ['http://[::ffff:10.0.0.1]/', 'private, IPv4-mapped dotted'],
  ['http://[::ffff:a00:1]/', 'private, IPv4-mapped hex'],
  ['http://172.16.0.1/', 'private 172.16/12'],
  ['http://172.31.255.255/', 'private, end of 172.16/12'],
  ['http://[::ffff:ac10:1]/', 'private 172.16/12, mapped'],
  ['http://192.168.0.1/', 'private 192.168/16'],
  ['http://3232235521/', 'private 192.168/16, decimal'],
  ['http://0xc0.0xa8.0.1/', 'private 192.168/16, hex parts'],
  ['http://[::ffff:c0a8:1]/', 'private 192.168/16, mapped'],
  ['http://[2002:c0a8:1::1]/', 'private 192.168/16, 6to4'],
  ['http://[64:ff9b::c0a8:1]/', 'private 192.168/16, NAT64'],
  ['http://[::ffff:0:c0a8:1]/', 'private 192.168/16, IPv4-translated'],
  // link-local and the cloud metadata service 169.254.169.254
  ['http://169.254.169.254/', 'metadata'],
  ['http://2852039166/', 'metadata, decimal'],
  ['http://0xa9fea9fe/', 'metadata, hex'],
  ['http://0251.0376.0251.0376/', 'metadata, octal'],
  ['http://169.254.43518/', 'metadata, short form'],
  ['http://0xa9.0xfe.0xa9.0xfe/', 'metadata, hex parts'],
  ['http://[::ffff:a9fe:a9fe]/', 'metadata, IPv4-mapped hex'],
  ['http://[::ffff:169.254.169.254]/', 'metadata, IPv4-mapped dotted'],
  ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', 'metadata, IPv4-mapped long'],
  ['http://[::a9fe:a9fe]/', 'metadata, IPv4-compatible'],
  ['http://[::ffff:0:a9fe:a9fe]/', 'metadata, IPv4-translated'],
  ['http://[64:ff9b::a9fe:a9fe]/', 'metadata, NAT64'],
  ['http://[2002:a9fe:a9fe::]/', 'metadata, 6to4'],
  ['http://[2001:0:4136:e378:8000:63bf:5601:5601]/', 'metadata, Teredo client'],
  ['http://169.254.0.1/', 'link-local'],
  ['http://[fe80::1]/', 'IPv6 link-local'],
  ['http://[febf:ffff::1]/', 'IPv6 link-local, end of fe80::/10'],
  ['http://[fd00:ec2::254]/', 'the IPv6 metadata service (unique local)'],
  // carrier-grade NAT 100.64/10 (also Alibaba's metadata 100.100.100.200)
  ['http://100.64.0.1/', 'CGNAT'],
  ['http://100.127.255.254/', 'CGNAT, end of 100.64/10'],
  ['http://1681915905/', 'CGNAT, decimal'],
  ['http://0x64400001/', 'CGNAT, hex'],
  ['http://100.100.100.200/', 'CGNAT (Alibaba metadata)'],
  ['http://[::ffff:6440:1]/', 'CGNAT, IPv4-mapped'],
  ['http://[64:ff9b::6440:1]/', 'CGNAT, NAT64'],
  ['http://[2002:6440:1::]/', 'CGNAT, 6to4'],
  // other special-purpose ranges
  ['http://192.0.0.192/', 'IETF protocol assignments (Oracle metadata)'],
  ['http://192.0.2.10/', 'documentation'],
  ['http://198.51.100.7/', 'documentation'],
  ['http://203.0.113.9/', 'documentation'],
  ['http://198.18.0.1/', 'benchmarking'],
  ['http://198.19.255.255/', 'benchmarking, end of 198.18/15'],
  ['http://224.0.0.1/', 'multicast'],
  ['http://239.255.255.250/', 'multicast (SSDP)'],
  ['http://240.0.0.1/', 'reserved'],
  ['http://255.255.255.255/', 'broadcast'],
  ['http://[fc00::1]/', 'IPv6 unique local'],
  ['http://[fec0::1]/', 'IPv6 site-local'],
  ['http://[ff02::1]/', 'IPv6 multicast'],
  ['http://[2001:db8::1]/', 'IPv6 documentation'],
  ['http://[3fff::1]/', 'IPv6 documentation (3fff::/20)'],
  ['http://[100::1]/', 'IPv6 discard-only'],
  ['http://[2001:2::1]/', 'IPv6 benchmarking'],
  ['http://[5f00::1]/', 'outside global unicast (SRv6 SIDs)'],
  ['http://[4000::1]/', 'outside global unicast (reserved)'],
]

const PUBLIC: [string, string][] = [
  ['http://93.184.216.34/', 'public IPv4'],
  ['http://1572395042/', 'public IPv4, decimal'],
  ['http://[::ffff:5db8:d822]/', 'public IPv4, mapped'],
  ['http://[64:ff9b::5db8:d822]/', 'public IPv4, NAT64'],
  ['http://[2002:5db8:d822::1]/', 'public IPv4, 6to4'],
  ['http://[2606:4700:4700::1111]/', 'public IPv6'],
  ['http://100.128.0.1/', 'just past CGNAT'],
  ['http://172.32.0.1/', 'just past 172.16/12'],
  ['http://169.255.0.1/', 'just past link-local'],
]

t.test(`${INTERNAL.length} spellings of internal addresses are refused`, async (t) => {
  t.ok(INTERNAL.length >= 40)
  for (const [link, what] of INTERNAL) t.match(await refused(link), /non-public/, `${link}: ${what}`)
})

t.test('public addresses pass, also inside IPv6 embeddings', async (t) => {
  for (const [link, what] of PUBLIC) t.equal(await refused(link), null, `${link}: ${what}`)
})

t.test('the refusal names the IPv4 address an IPv6 spelling carries', async (t) => {
  t.match(await refused('http://[::ffff:7f00:1]/'), /::ffff:7f00:1 \(ipv4-mapped 127\.0\.0\.1: loopback\)/)
  t.match(await refused('http://[2002:a9fe:a9fe::]/'), /6to4 169\.254\.169\.254: link-local/)
})

t.test('an allowlisted IPv4 address admits that address only, never an IPv6 spelling of it', async (t) => {
  const allow = ['127.0.0.1', '10.0.0.0/8']
  t.equal(await refused('http://127.0.0.1:8080/', allow), null)
  t.equal(await refused('http://2130706433/', allow), null, 'the URL parser makes this 127.0.0.1 itself')
  for (const link of ['http://[::ffff:7f00:1]/', 'http://[::ffff:127.0.0.1]/', 'http://[::7f00:1]/', 'http://[64:ff9b::7f00:1]/', 'http://[2002:7f00:1::]/', 'http://[::ffff:a00:1]/', 'http://127.0.0.2/', 'http://169.254.169.254/']) {
    t.match(await refused(link, allow), /non-public/, link)
  }
})

t.test('an allowlisted name vouches for what it resolves to, not for literals or other names', async (t) => {
  const allow = ['public.test', 'localhost:8080']
  t.equal(await refused('http://public.test/', allow), null)
  t.equal(await refused('http://PUBLIC.test./', allow), null, 'case and the trailing dot do not matter')
  t.equal(await refused('http://localhost:8080/', allow), null)
  t.match(await refused('http://localhost:8081/', allow), /non-public/, 'another port')
  t.match(await refused('http://localhost/', allow), /non-public/, 'the default port is port 80')
  t.match(await refused('http://127.0.0.1/', allow), /non-public/, 'the address behind an allowlisted name is not itself allowlisted')
  t.match(await refused('http://[::ffff:7f00:1]/', allow), /non-public/)
})
