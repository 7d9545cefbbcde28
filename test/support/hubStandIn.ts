// A local stand-in for the Hugging Face hub (HF_ENDPOINT=<its url>), so the real download code
// (faster-whisper's download_model over huggingface_hub) runs here without internet: it serves
// folders on disk as model repositories, with the parts of the hub's API a snapshot download
// uses: the revision's commit and file list, the file tree (git blob ids, LFS sha256 for large
// files), and each file by HEAD and GET (with ranges) under /<repo>/resolve/<revision>/<file>.
import { createHash } from 'node:crypto'
import { createReadStream, readFileSync, readdirSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

interface RepoFile {
  path: string
  size: number
  /** Git blob id (sha1 of "blob <size>\0" + content). */
  oid: string
  /** sha256, for the files the hub keeps in LFS (here: over 1 MB). */
  lfs: string | null
}

export interface HubStandIn {
  url: string
  /** Request paths served, in order (`GET /api/models/...`). */
  requests: string[]
  close(): Promise<void>
}

const LFS_OVER = 1_000_000

function describe(dir: string): RepoFile[] {
  return readdirSync(dir)
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort()
    .map((path) => {
      const data = readFileSync(join(dir, path))
      const oid = createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex')
      return { path, size: data.length, oid, lfs: data.length > LFS_OVER ? createHash('sha256').update(data).digest('hex') : null }
    })
}

/** Serves each folder as the model repository named by its key (e.g. `Systran/faster-whisper-base`). */
export async function startHubStandIn(repos: Record<string, string>): Promise<HubStandIn> {
  const described = new Map(Object.entries(repos).map(([id, dir]) => [id, { dir, files: describe(dir), sha: createHash('sha1').update(id).digest('hex') }]))
  const requests: string[] = []
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://hub')
    requests.push(`${req.method} ${url.pathname}`)
    const json = (body: unknown) => {
      const text = JSON.stringify(body)
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
      res.end(text)
    }
    const notFound = () => {
      res.writeHead(404, { 'content-type': 'application/json', 'x-error-code': 'RepoNotFound', 'x-error-message': 'Repository not found' })
      res.end(JSON.stringify({ error: 'Repository not found' }))
    }
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/(revision|tree)\/([^/]+)/.exec(url.pathname)
    if (api) {
      const repo = described.get(decodeURIComponent(api[1]!))
      if (!repo) return notFound()
      if (api[2] === 'revision') return json({ id: api[1], modelId: api[1], sha: repo.sha, private: false, siblings: repo.files.map((f) => ({ rfilename: f.path })) })
      return json(repo.files.map((f) => ({ type: 'file', oid: f.oid, size: f.size, path: f.path, ...(f.lfs ? { lfs: { oid: f.lfs, size: f.size, pointerSize: 134 } } : {}) })))
    }
    const file = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname)
    const repo = file ? described.get(decodeURIComponent(file[1]!)) : undefined
    const entry = repo?.files.find((f) => f.path === decodeURIComponent(file![3]!))
    if (!repo || !entry) return notFound()
    const headers: Record<string, string | number> = {
      'x-repo-commit': repo.sha,
      etag: `"${entry.oid}"`,
      'accept-ranges': 'bytes',
      'content-type': 'application/octet-stream',
    }
    if (entry.lfs) Object.assign(headers, { 'x-linked-etag': `"${entry.lfs}"`, 'x-linked-size': entry.size })
    const range = /^bytes=(\d+)-/.exec(req.headers.range ?? '')
    const from = range ? Math.min(Number(range[1]), entry.size) : 0
    headers['content-length'] = entry.size - from
    if (range) headers['content-range'] = `bytes ${from}-${entry.size - 1}/${entry.size}`
    res.writeHead(range ? 206 : 200, headers)
    if (req.method === 'HEAD') return res.end()
    createReadStream(join(repo.dir, entry.path), { start: from }).pipe(res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
}
