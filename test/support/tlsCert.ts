// A self-signed certificate for `localhost` and 127.0.0.1, made with the openssl binary for one
// test run (node:crypto makes keys but not X.509 certificates). It is its own CA: the client
// trusts it through `tlsCAFile`.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export interface TlsCert {
  key: string
  cert: string
  /** Path of the certificate, for `tlsCAFile=` in a connection string. */
  caFile: string
}

export function selfSignedCert(dir: string): TlsCert {
  const keyFile = join(dir, 'node.key')
  const caFile = join(dir, 'node.crt')
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', caFile, '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
  ], { stdio: 'ignore' })
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(caFile, 'utf8'), caFile }
}
