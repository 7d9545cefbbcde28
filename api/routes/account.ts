// The account's plan, credits and usage over REST: a documented extension, the same query as the
// MCP tool founder_status.
import type { Application } from '../../commands/application.ts'
import { AccountStatus } from '../../contract/account.ts'
import { defineRoute, type RouteDef } from '../route.ts'

export const accountRoutes = (app: Application): RouteDef[] => [
  defineRoute({
    operationId: 'getAccountStatus',
    method: 'GET',
    path: '/v1/account/status',
    tag: 'account',
    summary: 'Plan, credits left in this cycle, and usage',
    description: 'The same answer as the MCP tool founder_status.',
    extension: true,
    invalidCode: 'invalid_query',
    response: { status: 200, schema: AccountStatus, description: 'The account’s plan, credits and usage.' },
    errors: [],
    handle: ({ caller }) => app.status.status(caller),
  }),
]
