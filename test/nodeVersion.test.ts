// The Node promise (issue 30, item 5): package.json's engines range is one this check reads, the
// Node running the suite is in it, and a version outside it stops the start with what to install.
import t from 'tap'
import { inRange, nodeVersionProblem, supportedNodeRange } from '../app/nodeVersion.ts'

t.test('the engines range is read, and the running Node is in it', async (t) => {
  const range = supportedNodeRange()
  t.doesNotThrow(() => inRange('20.0.0', range), range)
  t.ok(inRange(process.versions.node, range), `Node ${process.versions.node} is in ${range}`)
  t.equal(nodeVersionProblem(), null)
})

t.test('what is in and out of ^20.19.0 || >=22.12.0', async (t) => {
  const range = '^20.19.0 || >=22.12.0'
  for (const v of ['20.19.0', '20.20.2', 'v20.99.1', '22.12.0', '24.1.0']) t.ok(inRange(v, range), `${v} is in`)
  for (const v of ['18.20.4', '20.18.3', '21.7.0', '22.11.0']) t.notOk(inRange(v, range), `${v} is out`)
  t.throws(() => inRange('20.20.0', '~20.19'), /cannot read "~20.19"/)
})

t.test('an unsupported Node is told what to install', async (t) => {
  t.match(nodeVersionProblem('18.20.4', '^20.19.0 || >=22.12.0'), /needs Node\.js \^20\.19\.0 \|\| >=22\.12\.0 .*this is Node\.js 18\.20\.4\. Install a supported version/)
})
