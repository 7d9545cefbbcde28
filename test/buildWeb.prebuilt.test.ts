// The dashboard build at start (scripts/build-web.ts) in the container image: the runtime stage has
// production dependencies only, so no vite, and the build made in the image's build stage. Before,
// the start saw a hash naming a vite it lacked, tried to rebuild into the read-only /app/web and
// logged "the dashboard could not be built" on every API start, though the build was there.
import t from 'tap'
import { needsBuild } from '../scripts/build-web.ts'

t.test('given a production install (no vite) with a build, then a start serves that build', async (t) => {
  t.equal(needsBuild({ force: false, hash: 'vite missing …', built: 'vite 7.3.8 …', toolkitInstalled: false }), false)
})

t.test('given a production install without a build, then a start tries (and says why it cannot)', async (t) => {
  t.equal(needsBuild({ force: false, hash: 'h', built: null, toolkitInstalled: false }), true)
})

t.test('given a checkout with vite, then a start rebuilds exactly when the sources changed', async (t) => {
  t.equal(needsBuild({ force: false, hash: 'new', built: 'old', toolkitInstalled: true }), true)
  t.equal(needsBuild({ force: false, hash: 'same', built: 'same', toolkitInstalled: true }), false)
  t.equal(needsBuild({ force: true, hash: 'same', built: 'same', toolkitInstalled: true }), true, '--force always builds')
})
