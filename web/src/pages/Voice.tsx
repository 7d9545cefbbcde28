import { useState } from 'preact/hooks'
import { api, type ConsentText, type VoiceScreen } from '../api.ts'
import { ConfirmButton, ErrorMessage, Loading, PageTitle, Status, useData } from '../components.tsx'
import { when } from '../format.ts'

const STATUS_TEXT: Record<VoiceScreen['consent']['status'], string> = {
  never: 'not given',
  granted: 'granted',
  revoked: 'revoked',
  outdated: 'outdated: the text changed since you agreed',
}

function Text(p: { text: ConsentText; headingId: string }) {
  return (
    <article class="consent-text" aria-labelledby={p.headingId}>
      <h3 id={p.headingId}>
        {p.text.title} <span class="small">(version {p.text.version})</span>
      </h3>
      {p.text.paragraphs.map((x) => (
        <p key={x}>{x}</p>
      ))}
    </article>
  )
}

export function VoicePage() {
  const screen = useData(() => api<VoiceScreen>('GET', '/voice'), [])
  const [agreed, setAgreed] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [message, setMessage] = useState<string | null>(null)
  // A profile's "do not recognise" box as clicked, until the screen reloaded after the write: a
  // render in between (the message, another state) would otherwise put the old value back from
  // the stale screen and undo the click on the page (issue 17, item 7).
  const [pending, setPending] = useState<Record<string, boolean>>({})
  const v = screen.data
  const act = async (fn: () => Promise<unknown>, done: string) => {
    setError(null)
    try {
      await fn()
      setAgreed(false)
      await screen.reload()
      // Announced once the page shows the new state, never before.
      setMessage(done)
    } catch (err) {
      setError(err)
    }
  }
  const setExcluded = async (p: VoiceScreen['profiles'][number], excluded: boolean) => {
    setPending((x) => ({ ...x, [p.id]: excluded }))
    await act(
      () => api('PATCH', `/voice/profiles/${p.id}`, { voiceExcluded: excluded }),
      excluded ? `${p.name} will not be recognised; the voiceprint was deleted.` : `${p.name} can be recognised again.`,
    )
    setPending(({ [p.id]: _, ...rest }) => rest)
  }
  return (
    <>
      <PageTitle>Voice consent</PageTitle>
      <ErrorMessage error={screen.error} />
      {!v ? (
        <Loading />
      ) : (
        <>
          <section aria-labelledby="consent-title">
            <h2 id="consent-title">Biometric consent</h2>
            <p>
              Status:{' '}
              <strong id="consent-status" data-status={v.consent.status}>
                {STATUS_TEXT[v.consent.status]}
              </strong>
              {v.consent.status === 'granted' && v.consent.grantedAt ? ` since ${when(v.consent.grantedAt)} (version ${v.grantedVersion})` : ''}
              {v.consent.status === 'revoked' && v.consent.revokedAt ? ` on ${when(v.consent.revokedAt)}` : ''}
            </p>
            {v.consent.status === 'outdated' && (
              <p class="notice" role="note">
                You agreed to version {v.grantedVersion ?? 'an older version'}. The text below (version {v.consentText.version}) replaces it; until you accept it, no voice
                is analysed or recognised.
              </p>
            )}
            <Text text={v.consentText} headingId="consent-text-title" />
            {v.consent.status === 'granted' ? (
              <ConfirmButton
                label="Revoke consent"
                confirmLabel="Revoke and delete every voiceprint"
                onConfirm={() => act(() => api('DELETE', '/voice/consent'), 'Consent revoked; every voiceprint was deleted.')}
              />
            ) : (
              <form
                onSubmit={(e) => {
                  e.preventDefault()
                  void act(() => api('POST', '/voice/consent', { consentVersion: v.consentText.version }), `Consent ${v.consent.status === 'outdated' ? 'accepted again' : 'granted'} (version ${v.consentText.version}).`)
                }}
              >
                <label class="check">
                  <input type="checkbox" id="consent-agree" checked={agreed} onChange={(e) => setAgreed(e.currentTarget.checked)} required /> I have read this text and agree
                  (version {v.consentText.version})
                </label>
                <button type="submit" class="primary" disabled={!agreed}>
                  {v.consent.status === 'outdated' ? 'Accept the new text' : 'Grant consent'}
                </button>
              </form>
            )}
            {v.grantedText && v.grantedText.version !== v.consentText.version && (
              <details>
                <summary>The text you agreed to (version {v.grantedText.version})</summary>
                <Text text={v.grantedText} headingId="granted-text-title" />
              </details>
            )}
            <ErrorMessage error={error} />
            <Status message={message} />
            <p class="small">{v.voiceMatching.available ? 'Voice matching is available.' : `Voice matching is not available here: ${v.voiceMatching.reason}.`}</p>
          </section>
          <section aria-labelledby="profiles-title">
            <h2 id="profiles-title">Voice profiles</h2>
            {v.profiles.length === 0 ? (
              <p>No voice profile yet: profiles appear when you confirm a speaker’s name in a note while consent is granted.</p>
            ) : (
              <table class="data">
                <thead>
                  <tr>
                    <th scope="col">Person</th>
                    <th scope="col">Voiceprint</th>
                    <th scope="col">Recognition</th>
                  </tr>
                </thead>
                <tbody>
                  {v.profiles.map((p) => (
                    <tr key={p.id}>
                      <th scope="row" id={`profile-${p.id}`}>
                        {p.name}
                      </th>
                      <td data-label="Voiceprint">{p.hasVoiceprint ? `yes, from ${Math.round(p.voiceSeconds)} s of speech` : 'none'}</td>
                      <td data-label="Recognition">
                        <label class="check">
                          <input
                            type="checkbox"
                            checked={pending[p.id] ?? p.voiceExcluded}
                            aria-busy={p.id in pending}
                            aria-describedby={`profile-${p.id}`}
                            onChange={(e) => void setExcluded(p, e.currentTarget.checked)}
                          />{' '}
                          Do not recognise<span class="visually-hidden"> {p.name}</span>
                        </label>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
        </>
      )}
    </>
  )
}
