import { useState } from 'preact/hooks'
import { api, type AuthorizedClient } from '../api.ts'
import { ConfirmButton, ErrorMessage, Loading, PageTitle, Status, useData } from '../components.tsx'
import { ago, when } from '../format.ts'

export function ClientsPage() {
  const list = useData(() => api<{ clients: AuthorizedClient[] }>('GET', '/oauth/clients'), [])
  const [error, setError] = useState<unknown>(null)
  const [message, setMessage] = useState<string | null>(null)
  return (
    <>
      <PageTitle>AI clients</PageTitle>
      <p>
        Applications you allowed to use your notes through MCP with OAuth. Revoking one stops its access at once; if it asks again, you see the consent screen again.
      </p>
      <ErrorMessage error={list.error ?? error} />
      <Status message={message} />
      {!list.data ? (
        <Loading />
      ) : list.data.clients.length === 0 ? (
        <p id="no-clients">No AI client is authorised.</p>
      ) : (
        <table class="data" id="clients">
          <thead>
            <tr>
              <th scope="col">Application</th>
              <th scope="col">May</th>
              <th scope="col">Approved</th>
              <th scope="col">Last signed in</th>
              <th scope="col">Access ends</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.clients.map((c) => (
              <tr key={c.clientId} data-client-id={c.clientId}>
                <th scope="row" id={`client-${c.clientId}`}>
                  {c.clientName ?? 'Unnamed application'}
                  {c.clientUri && <div class="small">{safeHost(c.clientUri)}</div>}
                </th>
                <td data-label="May">
                  <code>{c.scope}</code>
                </td>
                <td data-label="Approved">{when(c.approvedAt)}</td>
                <td data-label="Last signed in">{ago(c.lastTokenAt)}</td>
                <td data-label="Access ends">{when(c.expiresAt)}</td>
                <td>
                  <ConfirmButton
                    label="Revoke"
                    confirmLabel={`Revoke ${c.clientName ?? 'this application'}`}
                    describedBy={`client-${c.clientId}`}
                    onConfirm={async () => {
                      try {
                        const r = await api<{ clients: AuthorizedClient[] }>('DELETE', `/oauth/clients/${c.clientId}`)
                        list.setData(r)
                        setMessage(`${c.clientName ?? 'The application'} can no longer use your account.`)
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
      )}
    </>
  )
}

function safeHost(u: string): string {
  try {
    return new URL(u).host
  } catch {
    return u
  }
}
