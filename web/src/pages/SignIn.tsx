import { useState } from 'preact/hooks'
import { api, type Session } from '../api.ts'
import { ErrorMessage, PageTitle } from '../components.tsx'

export function SignInPage(p: { next: string | null; onSignedIn: (s: Session) => void }) {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const forOAuth = !!p.next?.startsWith('/oauth/authorize?')
  return (
    <main id="main" class="signin">
      <PageTitle>Sign in</PageTitle>
      {forOAuth ? <p>An AI application asks for access to your notes. Sign in to review its request.</p> : <p>Sign in with the email and password of your account.</p>}
      <form
        onSubmit={async (e) => {
          e.preventDefault()
          setBusy(true)
          setError(null)
          try {
            const s = await api<Session>('POST', '/session', { email, password })
            p.onSignedIn(s)
          } catch (err) {
            setError(err)
          } finally {
            setBusy(false)
          }
        }}
      >
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <ErrorMessage error={error} />
        <button type="submit" class="primary" disabled={busy}>
          Sign in
        </button>
      </form>
      <p class="small">
        An API key does not sign in here; it is for the REST API and MCP. People are added with <code>npm run admin -- add-person</code>.
      </p>
    </main>
  )
}
