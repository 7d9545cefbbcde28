import { useState } from 'preact/hooks'
import { api, type ApiKey } from '../api.ts'
import { ConfirmButton, ErrorMessage, Loading, PageTitle, SecretOnce, Status, useData } from '../components.tsx'
import { ago, when } from '../format.ts'

export function KeysPage() {
  const keys = useData(() => api<{ keys: ApiKey[] }>('GET', '/keys'), [])
  const [name, setName] = useState('')
  const [issued, setIssued] = useState<{ apiKey: string; name: string } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [message, setMessage] = useState<string | null>(null)
  const active = keys.data?.keys.filter((k) => k.status === 'active') ?? []
  const revoked = keys.data?.keys.filter((k) => k.status === 'revoked') ?? []
  return (
    <>
      <PageTitle>API keys</PageTitle>
      <p>
        Keys let programs use the REST API (<code>Authorization: Bearer &lt;key&gt;</code>) and MCP clients act for this account. A key is shown once, when it is
        made.
      </p>
      <form
        class="inline-form"
        onSubmit={async (e) => {
          e.preventDefault()
          setError(null)
          try {
            const r = await api<{ apiKey: string; name: string }>('POST', '/keys', name.trim() ? { name: name.trim() } : {})
            setIssued(r)
            setName('')
            await keys.reload()
          } catch (err) {
            setError(err)
          }
        }}
      >
        <label for="key-name">Name of the new key</label>
        <input id="key-name" value={name} maxLength={80} placeholder="e.g. laptop script" onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" class="primary">
          Create key
        </button>
      </form>
      <ErrorMessage error={error} />
      {issued && <SecretOnce id="new-key" label={`New key “${issued.name}”`} value={issued.apiKey} onDone={() => setIssued(null)} />}
      <Status message={message} />
      <ErrorMessage error={keys.error} />
      {!keys.data ? (
        <Loading />
      ) : (
        <>
          <table class="data" aria-describedby="keys-note">
            <caption>Active keys ({active.length})</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {active.length === 0 && (
                <tr>
                  <td colSpan={5}>No active key.</td>
                </tr>
              )}
              {active.map((k) => (
                <tr key={k.id} data-key-id={k.id}>
                  <th scope="row" id={`key-${k.id}`}>
                    {k.name}
                  </th>
                  <td data-label="Key">
                    <code>{k.prefix}</code>
                  </td>
                  <td data-label="Created">{when(k.createdAt)}</td>
                  <td data-label="Last used" class="last-used" title={k.lastUsedAt ? when(k.lastUsedAt) : undefined}>
                    {ago(k.lastUsedAt)}
                  </td>
                  <td>
                    <ConfirmButton
                      label="Revoke"
                      confirmLabel={`Revoke ${k.name} now`}
                      describedBy={`key-${k.id}`}
                      onConfirm={async () => {
                        try {
                          await api('DELETE', `/keys/${k.id}`)
                          setMessage(`Key ${k.name} revoked: it no longer works.`)
                          await keys.reload()
                        } catch (err) {
                          setError(err)
                        }
                      }}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p id="keys-note" class="small">
            “Last used” is recorded at most once every few minutes per key, so it is exact to within that.
          </p>
          {revoked.length > 0 && (
            <details>
              <summary>Revoked keys ({revoked.length})</summary>
              <ul class="plain">
                {revoked.map((k) => (
                  <li key={k.id}>
                    <code>{k.prefix}</code> {k.name}: revoked {when(k.revokedAt)}, last used {ago(k.lastUsedAt)}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </>
      )}
    </>
  )
}
