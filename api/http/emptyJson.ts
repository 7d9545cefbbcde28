// Many HTTP clients send `Content-Type: application/json` on every request, bodies or not.
// fastify answers an empty JSON body with 400; here it is no body at all, so a route whose body
// is optional (finalize, translation) or absent (speakers/suggest) takes it as such and a route
// that needs one says what is missing. Anything else is parsed by fastify's own JSON parser,
// whose prototype-poisoning protection drops `__proto__` and `constructor.prototype` keys: like
// any other property the schema does not name, they are ignored, never merged into an object
// (refusing them would refuse bodies the OpenAPI document allows; schemathesis checks that). Registered per scope, not on the MCP endpoint,
// whose transport reads a missing parsed body from the stream.
import type { FastifyInstance } from 'fastify'

export function emptyJsonIsNoBody(app: FastifyInstance) {
  const json = app.getDefaultJsonParser('remove', 'remove')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (typeof body === 'string' ? body.trim() === '' : body.length === 0) return done(null, undefined)
    json(req, body as string, done)
  })
}
