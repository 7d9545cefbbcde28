// The OAuth 2.1 authorization server's wire shapes: dynamic client registration (RFC 7591), the
// authorization request, the token endpoint (form-encoded), token responses, and the two
// discovery documents (RFC 8414, RFC 9728). Field names are the RFCs' own.
import { z } from 'zod'
import { GRANT_TYPES, TOKEN_ENDPOINT_AUTH_METHODS } from '../domain/oauth/client.ts'

const Url = z.string().max(2000)

export const ClientRegistrationRequest = z.looseObject({
  redirect_uris: z.array(Url).min(1).max(10),
  token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).optional(),
  grant_types: z.array(z.enum(GRANT_TYPES)).min(1).optional(),
  response_types: z.array(z.literal('code')).min(1).optional(),
  client_name: z.string().max(200).optional(),
  client_uri: Url.optional(),
  scope: z.string().max(500).optional(),
  software_id: z.string().max(200).optional(),
  software_version: z.string().max(100).optional(),
})
export type ClientRegistrationRequest = z.infer<typeof ClientRegistrationRequest>

export const ClientRegistrationResponse = z.object({
  client_id: z.string(),
  client_secret: z.string().optional(),
  client_id_issued_at: z.number().int(),
  client_secret_expires_at: z.number().int().optional(),
  redirect_uris: z.array(z.string()),
  token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS),
  grant_types: z.array(z.enum(GRANT_TYPES)),
  response_types: z.array(z.literal('code')),
  client_name: z.string().optional(),
  client_uri: z.string().optional(),
  scope: z.string(),
  software_id: z.string().optional(),
  software_version: z.string().optional(),
})
export type ClientRegistrationResponse = z.infer<typeof ClientRegistrationResponse>

const Param = z.string().max(2000)

/** GET (query) and POST (form) of the authorization endpoint: what the client put in the URL. */
export const AuthorizationRequest = z.object({
  response_type: Param.optional(),
  client_id: Param.optional(),
  redirect_uri: Param.optional(),
  code_challenge: Param.optional(),
  code_challenge_method: Param.optional(),
  state: Param.optional(),
  scope: Param.optional(),
  resource: Param.optional(),
})
export type AuthorizationRequest = z.infer<typeof AuthorizationRequest>

/** The token endpoint's form fields (RFC 6749 sections 4.1.3 and 6, RFC 8707). */
export const TokenRequest = z.object({
  grant_type: Param.optional(),
  code: Param.optional(),
  redirect_uri: Param.optional(),
  code_verifier: Param.optional(),
  refresh_token: Param.optional(),
  client_id: Param.optional(),
  client_secret: Param.optional(),
  resource: Param.optional(),
  scope: Param.optional(),
})
export type TokenRequest = z.infer<typeof TokenRequest>

export const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  refresh_token: z.string().optional(),
  scope: z.string(),
})
export type TokenResponse = z.infer<typeof TokenResponse>

export const RevocationRequest = z.object({
  token: Param.optional(),
  token_type_hint: Param.optional(),
  client_id: Param.optional(),
  client_secret: Param.optional(),
})
export type RevocationRequest = z.infer<typeof RevocationRequest>

export const AuthorizationServerMetadata = z.object({
  issuer: z.url(),
  authorization_endpoint: z.url(),
  token_endpoint: z.url(),
  registration_endpoint: z.url(),
  revocation_endpoint: z.url(),
  scopes_supported: z.array(z.string()),
  response_types_supported: z.array(z.string()),
  response_modes_supported: z.array(z.string()),
  grant_types_supported: z.array(z.string()),
  token_endpoint_auth_methods_supported: z.array(z.string()),
  revocation_endpoint_auth_methods_supported: z.array(z.string()),
  code_challenge_methods_supported: z.array(z.string()),
  authorization_response_iss_parameter_supported: z.boolean(),
  service_documentation: z.url().optional(),
})
export type AuthorizationServerMetadata = z.infer<typeof AuthorizationServerMetadata>

export const ProtectedResourceMetadata = z.object({
  resource: z.url(),
  authorization_servers: z.array(z.url()),
  scopes_supported: z.array(z.string()),
  bearer_methods_supported: z.array(z.string()),
  resource_name: z.string(),
  resource_documentation: z.url().optional(),
})
export type ProtectedResourceMetadata = z.infer<typeof ProtectedResourceMetadata>
