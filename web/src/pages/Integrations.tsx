import { useState } from 'preact/hooks'
import { api, type Plan, type WebhookDelivery, type WebhookEndpoint } from '../api.ts'
import { ConfirmButton, ErrorMessage, Link, Loading, PageTitle, SecretOnce, Status, useData } from '../components.tsx'
import { when } from '../format.ts'

const EVENTS = [
  { id: 'note.ready', label: 'A note is ready (note.ready)' },
  { id: 'note.failed', label: 'A note failed (note.failed)' },
  { id: 'note.speakers_updated', label: 'Speakers of a note were named or corrected (note.speakers_updated)' },
]

export function IntegrationsPage(p: { plan: Plan }) {
  return (
    <>
      <PageTitle>Integrations</PageTitle>
      <p>
        Webhooks: the service POSTs to your endpoint when a transcription ends, and when the speakers of a note are named. Calls are signed the Standard Webhooks way (<code>webhook-id</code>,{' '}
        <code>webhook-timestamp</code>, <code>webhook-signature</code>, HMAC-SHA256 with the endpoint’s secret) and retried with backoff until your endpoint answers
        2xx.
      </p>
      {p.plan === 'power' ? (
        <Webhooks />
      ) : (
        <p class="notice" role="note">
          Webhooks are part of the Power plan; this account is on the {p.plan} plan. See <Link to="credits">Plan and credits</Link>.
        </p>
      )}
    </>
  )
}

function Webhooks() {
  const list = useData(() => api<{ webhooks: WebhookEndpoint[] }>('GET', '/webhooks'), [])
  const [url, setUrl] = useState('')
  const [description, setDescription] = useState('')
  const [events, setEvents] = useState<string[]>(EVENTS.map((e) => e.id))
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [message, setMessage] = useState<string | null>(null)
  return (
    <>
      <section aria-labelledby="add-title">
        <h2 id="add-title">Add an endpoint</h2>
        <form
          class="stack"
          onSubmit={async (e) => {
            e.preventDefault()
            setError(null)
            try {
              const r = await api<WebhookEndpoint & { secret: string }>('POST', '/webhooks', { url: url.trim(), events, ...(description.trim() ? { description: description.trim() } : {}) })
              setSecret({ label: `Signing secret of ${r.url}`, value: r.secret })
              setUrl('')
              setDescription('')
              await list.reload()
            } catch (err) {
              setError(err)
            }
          }}
        >
          <label for="hook-url">Endpoint URL</label>
          <input id="hook-url" type="url" required placeholder="https://example.com/hooks/notes" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          <fieldset>
            <legend>Events</legend>
            {EVENTS.map((ev) => (
              <label key={ev.id} class="check">
                <input
                  type="checkbox"
                  checked={events.includes(ev.id)}
                  onChange={(e) => setEvents(e.currentTarget.checked ? [...events, ev.id] : events.filter((x) => x !== ev.id))}
                />{' '}
                {ev.label}
              </label>
            ))}
          </fieldset>
          <label for="hook-description">Description (optional)</label>
          <input id="hook-description" maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          <button type="submit" class="primary" disabled={events.length === 0}>
            Add endpoint
          </button>
        </form>
        <ErrorMessage error={error} />
      </section>
      {secret && <SecretOnce id="hook-secret" label={secret.label} value={secret.value} onDone={() => setSecret(null)} />}
      <Status message={message} />
      <section aria-labelledby="endpoints-title">
        <h2 id="endpoints-title">Endpoints</h2>
        <ErrorMessage error={list.error} />
        {!list.data ? (
          <Loading />
        ) : list.data.webhooks.length === 0 ? (
          <p>No endpoint yet.</p>
        ) : (
          <ul class="endpoints">
            {list.data.webhooks.map((w) => (
              <Endpoint
                key={w.id}
                endpoint={w}
                onSecret={(value) => setSecret({ label: `New signing secret of ${w.url}`, value })}
                onMessage={setMessage}
                onError={setError}
                onDeleted={() => void list.reload()}
              />
            ))}
          </ul>
        )}
      </section>
    </>
  )
}

function Endpoint(p: { endpoint: WebhookEndpoint; onSecret: (s: string) => void; onMessage: (m: string) => void; onError: (e: unknown) => void; onDeleted: () => void }) {
  const w = p.endpoint
  const [open, setOpen] = useState(false)
  const [watch, setWatch] = useState(0)
  return (
    <li class="endpoint" data-endpoint-id={w.id}>
      <h3 id={`ep-${w.id}`}>
        <code>{w.url}</code>
      </h3>
      <p class="small">
        {w.events.join(', ')} · added {when(w.createdAt)}
        {w.description ? ` · ${w.description}` : ''}
      </p>
      <div class="actions">
        <button
          type="button"
          aria-describedby={`ep-${w.id}`}
          onClick={async () => {
            try {
              await api('POST', `/webhooks/${w.id}/test`)
              p.onMessage(`Test event queued for ${w.url}; it appears in the delivery log.`)
              setOpen(true)
              setWatch((n) => n + 1)
            } catch (err) {
              p.onError(err)
            }
          }}
        >
          Send test event
        </button>
        <button type="button" aria-expanded={open} aria-controls={`log-${w.id}`} onClick={() => setOpen(!open)}>
          {open ? 'Hide delivery log' : 'Show delivery log'}
        </button>
        <ConfirmButton
          label="Rotate secret"
          confirmLabel="Replace the secret now"
          describedBy={`ep-${w.id}`}
          onConfirm={async () => {
            try {
              const r = await api<{ secret: string; previousSecretExpiresAt: string }>('POST', `/webhooks/${w.id}/rotate`)
              p.onSecret(r.secret)
              p.onMessage(`Secret replaced; the previous one keeps signing until ${when(r.previousSecretExpiresAt)}.`)
            } catch (err) {
              p.onError(err)
            }
          }}
        />
        <ConfirmButton
          label="Delete"
          confirmLabel="Delete this endpoint"
          describedBy={`ep-${w.id}`}
          onConfirm={async () => {
            try {
              await api('DELETE', `/webhooks/${w.id}`)
              p.onMessage(`Endpoint ${w.url} deleted.`)
              p.onDeleted()
            } catch (err) {
              p.onError(err)
            }
          }}
        />
      </div>
      <div id={`log-${w.id}`} hidden={!open}>
        {open && <DeliveryLog endpointId={w.id} key={watch} />}
      </div>
    </li>
  )
}

function DeliveryLog(p: { endpointId: string }) {
  const log = useData(
    () => api<{ deliveries: WebhookDelivery[] }>('GET', `/webhooks/${p.endpointId}/deliveries`),
    [p.endpointId],
    (d) => (d.deliveries.some((x) => x.status === 'pending') ? 1000 : null),
  )
  if (log.error) return <ErrorMessage error={log.error} />
  if (!log.data) return <Loading />
  return (
    <table class="data deliveries">
      <caption>Delivery log (newest first)</caption>
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Status</th>
          <th scope="col">Tries</th>
          <th scope="col">Queued</th>
        </tr>
      </thead>
      <tbody>
        {log.data.deliveries.length === 0 && (
          <tr>
            <td colSpan={4}>Nothing delivered yet.</td>
          </tr>
        )}
        {log.data.deliveries.map((d) => (
          <tr key={d.id} data-delivery-id={d.id} data-status={d.status}>
            <th scope="row">
              {d.eventType}
              {d.noteId && (
                <>
                  {' '}
                  <Link to={`notes/${d.noteId}`}>note</Link>
                </>
              )}
              <div class="small">
                <code>{d.messageId}</code>
              </div>
            </th>
            <td data-label="Status">
              <span class={`badge ${d.status === 'delivered' ? 'ok' : d.status === 'pending' ? 'busy' : 'bad'}`}>{d.status}</span>
              {d.nextAttemptAt && <div class="small">next try {when(d.nextAttemptAt)}</div>}
            </td>
            <td data-label="Tries">
              {d.tries.length === 0 ? (
                'not tried yet'
              ) : (
                <ol class="tries">
                  {d.tries.map((t) => (
                    <li key={t.attempt}>
                      <span class="try-status">{t.statusCode !== null ? `HTTP ${t.statusCode}` : (t.error ?? 'no answer')}</span> in {t.durationMs} ms, {when(t.at)}
                      {t.outcome === 'retry' ? ' (retried)' : ''}
                      {t.responseExcerpt ? (
                        <pre class="excerpt" aria-label="Start of the answer">
                          {t.responseExcerpt}
                        </pre>
                      ) : null}
                    </li>
                  ))}
                </ol>
              )}
            </td>
            <td data-label="Queued">{when(d.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
