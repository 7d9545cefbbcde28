// Imported first by the entry points (npm start, the admin command): on an unsupported Node the
// process stops here with a clear message, before any other module is evaluated.
import { nodeVersionProblem } from '../app/nodeVersion.ts'

const problem = nodeVersionProblem()
if (problem) {
  console.error(problem)
  process.exit(1)
}
