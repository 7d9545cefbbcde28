// founder_status: the account's plan, the credits left in this cycle and what used them.
import { AccountStatus } from '../../contract/account.ts'
import { NoArguments } from '../../contract/mcp.ts'
import { defineTool } from '../tool.ts'

export const founderStatus = defineTool({
  name: 'founder_status',
  title: 'Plan, credits and usage',
  description:
    'The account’s plan and whether it includes the REST API; `credits` of the current monthly cycle (monthly grant, left, reserved by running imports, spent, resetsAt); ' +
    '`usage`: credits per operation this cycle, notes by status, upload minutes against the plan quota, stored bytes against the storage quota.',
  input: NoArguments,
  output: AccountStatus,
  readOnly: true,
  idempotent: true,
  handle: ({ app, caller }) => app.status.status(caller),
})
