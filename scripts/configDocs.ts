// Writes docs/configuration.md, the reference of every environment variable, from the source of
// app/config.ts (`npm run docs:config`). Nothing is listed by hand, so the page cannot drift:
// test/docs.configuration.test.ts fails when the committed page differs from what this writes.
//
// How it reads the source (the TypeScript compiler's own parser and type checker):
// - the functions reachable from `loadConfig` through calls into the repository's own files
//   (`loadPipelineConfig`, `mcpConfig`, ...), in the order they are first called;
// - in them, every read of a variable: `env.NAME` / `process.env.NAME` / `env['NAME']`, and a call
//   that passes `env` with the name as a string (`envNumber(env, 'NAME', 1000)`);
// - its default: the argument after the read (`int(env.PORT, 3000, 'PORT')`, `envNumber(env,
//   'NAME', 30_000)`) or the right side of `??` / `||`, constants and arithmetic worked out;
// - its meaning: the doc comment of the `Config` property the value is assigned to (through the
//   type checker, so `PipelineConfig`'s comments count for `pipeline.*`), else of the enclosing
//   property or function. When a comment names several variables, the sentences naming this one.
// A new variable therefore needs nothing here: read it in loadConfig (or what it calls) and give
// its Config property a doc comment, as the others have.
import ts from 'typescript'
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const CONFIG_SOURCE = join(ROOT, 'app', 'config.ts')
export const CONFIG_DOC = join(ROOT, 'docs', 'configuration.md')

export interface ConfigVariable {
  name: string
  /** The default as the source spells it (worked out for numbers), or null when the read has none. */
  default: string | null
  /** The setting it fills, e.g. `pipeline.jobs.leaseMs`, or the function that reads it. */
  setting: string
  meaning: string
  /** Where it is read first, `file:line`. */
  source: string
}

const ENV_NAME = /^[A-Z][A-Z0-9_]*$/

function isEnvObject(e: ts.Expression): boolean {
  if (ts.isIdentifier(e)) return e.text === 'env'
  return ts.isPropertyAccessExpression(e) && ts.isIdentifier(e.expression) && e.expression.text === 'process' && e.name.text === 'env'
}

/** A number the expression stands for (literals, + - * /, parentheses, constants), else null. */
function numeric(e: ts.Expression, checker: ts.TypeChecker): number | null {
  if (ts.isNumericLiteral(e)) return Number(e.text.replace(/_/g, ''))
  if (ts.isParenthesizedExpression(e)) return numeric(e.expression, checker)
  if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.MinusToken) {
    const v = numeric(e.operand, checker)
    return v === null ? null : -v
  }
  if (ts.isBinaryExpression(e)) {
    const [a, b] = [numeric(e.left, checker), numeric(e.right, checker)]
    if (a === null || b === null) return null
    switch (e.operatorToken.kind) {
      case ts.SyntaxKind.AsteriskToken: return a * b
      case ts.SyntaxKind.PlusToken: return a + b
      case ts.SyntaxKind.MinusToken: return a - b
      case ts.SyntaxKind.SlashToken: return a / b
      default: return null
    }
  }
  const init = constInitializer(e, checker)
  return init ? numeric(init, checker) : null
}

/** The initializer of the `const` an identifier names, when it has one. */
function constInitializer(e: ts.Expression, checker: ts.TypeChecker): ts.Expression | null {
  if (!ts.isIdentifier(e)) return null
  let symbol = checker.getSymbolAtLocation(e)
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol)
  const decl = symbol?.valueDeclaration
  if (decl && ts.isVariableDeclaration(decl) && decl.initializer && ts.getCombinedNodeFlags(decl) & ts.NodeFlags.Const) return decl.initializer
  return null
}

function defaultText(e: ts.Expression, checker: ts.TypeChecker): string {
  const n = numeric(e, checker)
  if (n !== null) return String(n)
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text
  const init = constInitializer(e, checker)
  if (init && (ts.isStringLiteral(init) || ts.isArrayLiteralExpression(init))) return defaultText(init, checker)
  if (ts.isArrayLiteralExpression(e)) return e.elements.map((x) => defaultText(x, checker)).join(',')
  // Another variable as the fallback reads as its name (`MCP_TRUST_PROXY` falls back to TRUST_PROXY).
  return e.getText().replace(/\s+/g, ' ').replace(/\b(?:process\.)?env\.([A-Z][A-Z0-9_]*)/g, '$1')
}

/** The default a read carries: the argument after it in a call, or the right side of `??` / `||`. */
function defaultOf(read: ts.Node, checker: ts.TypeChecker): { value: string | null; decided: boolean } {
  const parent = read.parent
  if (ts.isCallExpression(parent)) {
    const i = parent.arguments.indexOf(read as ts.Expression)
    let next = parent.arguments[i + 1]
    // oneOf(env.X, [allowed values], default, 'X'): the default comes after the allowed values.
    if (next && (ts.isArrayLiteralExpression(next) || (ts.isAsExpression(next) && ts.isArrayLiteralExpression(next.expression)))) next = parent.arguments[i + 2]
    if (next && !(ts.isStringLiteral(next) && ENV_NAME.test(next.text))) return { value: defaultText(next, checker), decided: true }
    return { value: null, decided: false }
  }
  // `env.X ? read(env.X) : null`: without the variable, the setting is off.
  if (ts.isConditionalExpression(parent) && parent.condition === read && parent.whenTrue.getText().includes(read.getText().replace(/^.*\./, ''))) {
    return { value: parent.whenFalse.kind === ts.SyntaxKind.NullKeyword ? null : defaultText(parent.whenFalse, checker), decided: true }
  }
  // `a || env.X || 'x'` and `env.X ?? d`: the next alternative along the chain.
  let n: ts.Node = read
  while (ts.isBinaryExpression(n.parent) && [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(n.parent.operatorToken.kind)) {
    if (n.parent.left === n) {
      const right = n.parent.right
      return { value: right.kind === ts.SyntaxKind.NullKeyword ? null : defaultText(right, checker), decided: true }
    }
    n = n.parent
  }
  return { value: null, decided: false }
}

const docOf = (symbol: ts.Symbol | undefined, checker: ts.TypeChecker) =>
  symbol ? ts.displayPartsToString(symbol.getDocumentationComment(checker)).replace(/\s+/g, ' ').trim() : ''

/** The sentences of a comment that name the variable; the whole comment when none does. */
function meaningFor(name: string, doc: string): string {
  const names = new RegExp(`\\b${name}(?![A-Z0-9_])`)
  const sentences = doc.split(/(?<=[.;])\s+(?=[A-Z`])/)
  const own = sentences.filter((s) => names.test(s))
  const text = (own.length > 0 ? own.join(' ') : doc).trim().replace(/;$/, '.')
  // "PORT: where ..." reads as "Where ..." in the row of PORT.
  const bare = text.replace(new RegExp(`^${name}: `), '')
  return bare === text ? text : bare.charAt(0).toUpperCase() + bare.slice(1)
}

/** Whether a comment names the variable. */
const names = (doc: string, name: string) => new RegExp(`\\b${name}(?![A-Z0-9_])`).test(doc)

/** Where a read sits: the setting path inside its function, and the doc comments around it, nearest first. */
function placeOf(read: ts.Node, checker: ts.TypeChecker): { path: string[]; docs: string[]; fromVariable: boolean } {
  const path: string[] = []
  const docs: string[] = []
  let fromVariable = false
  for (let n: ts.Node = read; n && !ts.isSourceFile(n); n = n.parent) {
    if ((ts.isPropertyAssignment(n) || ts.isShorthandPropertyAssignment(n)) && ts.isObjectLiteralExpression(n.parent)) {
      const name = n.name.getText()
      path.unshift(name)
      const type = checker.getContextualType(n.parent)
      const property = type?.getProperty(name) ?? (type?.isUnion() ? type.types.map((t) => t.getProperty(name)).find(Boolean) : undefined)
      docs.push(docOf(property, checker))
    }
    // `const port = int(env.PORT, ...)` at the top of a loader: the setting of that name.
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && path.length === 0) {
      path.unshift(n.name.text)
      fromVariable = true
    }
    if (ts.isFunctionDeclaration(n) && n.name) {
      docs.push(docOf(checker.getSymbolAtLocation(n.name), checker))
      return { path, docs: docs.filter(Boolean), fromVariable }
    }
  }
  return { path, docs: docs.filter(Boolean), fromVariable }
}

interface Reached {
  fn: ts.FunctionDeclaration
  /** The setting path and doc comments of the place loadConfig's tree calls it from. */
  path: string[]
  docs: string[]
}

/** The function declarations of the repository that `start` calls, directly or not, in call order. */
function reachable(start: ts.FunctionDeclaration, checker: ts.TypeChecker): Reached[] {
  const out: Reached[] = [{ fn: start, path: [], docs: [] }]
  const visit = (from: Reached) => {
    const walk = (n: ts.Node): void => {
      if (ts.isCallExpression(n)) {
        let symbol = checker.getSymbolAtLocation(n.expression)
        if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol)
        const decl = symbol?.valueDeclaration
        const file = decl?.getSourceFile().fileName ?? ''
        if (decl && ts.isFunctionDeclaration(decl) && decl.body && file.startsWith(ROOT) && !file.includes('node_modules') && !out.some((r) => r.fn === decl)) {
          const at = placeOf(n, checker)
          const next = { fn: decl, path: [...from.path, ...(at.fromVariable ? [] : at.path)], docs: [...at.docs.filter((d) => d !== docOf(checker.getSymbolAtLocation(from.fn.name!), checker)), ...from.docs] }
          out.push(next)
          visit(next)
        }
      }
      ts.forEachChild(n, walk)
    }
    if (from.fn.body) walk(from.fn.body)
  }
  visit(out[0]!)
  return out
}

/** Every variable the configuration reads, in the order loadConfig reaches them. */
export function configVariables(source = CONFIG_SOURCE): ConfigVariable[] {
  const program = ts.createProgram([source], { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, allowImportingTsExtensions: true, noEmit: true, strict: true })
  const checker = program.getTypeChecker()
  const file = program.getSourceFile(source)
  if (!file) throw new Error(`cannot read ${source}`)
  const loadConfig = file.statements.find((s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === 'loadConfig')
  if (!loadConfig) throw new Error(`${relative(ROOT, source)} has no function loadConfig`)
  const functions = reachable(loadConfig, checker)

  // Every doc comment of the Config tree and of those functions: a variable read somewhere else
  // than the property that documents it (`const secure = env.DASHBOARD_COOKIE_SECURE`) is found there.
  const allDocs: string[] = functions.map((r) => docOf(r.fn.name && checker.getSymbolAtLocation(r.fn.name), checker))
  const seenTypes = new Set<ts.Type>()
  const collect = (type: ts.Type) => {
    if (seenTypes.has(type)) return
    seenTypes.add(type)
    for (const t of type.isUnion() ? type.types : [type]) {
      for (const p of t.getProperties()) {
        allDocs.push(docOf(p, checker))
        const decl = p.valueDeclaration ?? p.declarations?.[0]
        if (decl) collect(checker.getTypeOfSymbolAtLocation(p, decl))
      }
    }
  }
  const configType = file.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'Config')
  if (configType) collect(checker.getTypeAtLocation(configType))

  const found = new Map<string, ConfigVariable & { decided: boolean }>()
  const record = (name: string, read: ts.Node, from: Reached) => {
    const place = placeOf(read, checker)
    // A local variable names a setting only in loadConfig itself (`const port = ...`).
    const path = place.fromVariable && from.fn !== loadConfig ? [] : place.path
    const local = [...place.docs, ...from.docs].find((d) => names(d, name))
    // Elsewhere, only a sentence about the variable itself (`DASHBOARD_COOKIE_SECURE: ...`).
    const about = new RegExp(`(^|[.;]\\s+)(\`?[A-Z][A-Z0-9_]*\`?,\\s*)*\`?${name}\\b(?![A-Z0-9_])`)
    const elsewhere = allDocs.find((d) => about.test(d))
    const meaning = local ? meaningFor(name, local) : elsewhere ? meaningFor(name, elsewhere) : !place.fromVariable ? (place.docs[0] ?? '') : ''
    const fallback = defaultOf(read, checker)
    const sf = read.getSourceFile()
    const setting = [...from.path, ...path].join('.') || `${from.fn.name?.text ?? 'loadConfig'}()`
    const known = found.get(name)
    if (!known) {
      const line = sf.getLineAndCharacterOfPosition(read.getStart()).line + 1
      found.set(name, { name, default: fallback.value, decided: fallback.decided, setting, meaning, source: `${relative(ROOT, sf.fileName)}:${line}` })
      return
    }
    // Read again elsewhere (MODELS_DIR, WHISPER_THREADS): keep the first, fill what it lacks.
    if (!known.decided && fallback.decided) Object.assign(known, { default: fallback.value, decided: true })
    if (!known.meaning && meaning) known.meaning = meaning
  }
  for (const from of functions) {
    const walk = (n: ts.Node): void => {
      if (ts.isPropertyAccessExpression(n) && isEnvObject(n.expression) && ENV_NAME.test(n.name.text)) record(n.name.text, n, from)
      else if (ts.isElementAccessExpression(n) && isEnvObject(n.expression) && ts.isStringLiteral(n.argumentExpression) && ENV_NAME.test(n.argumentExpression.text)) record(n.argumentExpression.text, n, from)
      else if (ts.isCallExpression(n) && n.arguments.some((a) => isEnvObject(a))) {
        for (const a of n.arguments) if (ts.isStringLiteral(a) && ENV_NAME.test(a.text)) record(a.text, a, from)
      }
      ts.forEachChild(n, walk)
    }
    if (from.fn.body) walk(from.fn.body)
  }
  return [...found.values()].map(({ decided: _decided, ...v }) => v)
}

const cell = (s: string) => s.replace(/\|/g, '\\|')
const code = (s: string) => (s.includes('`') ? `\`\` ${s} \`\`` : `\`${s}\``)

/** The page: one table per group of settings (the first part of the setting's path). */
export function renderConfigDoc(vars = configVariables()): string {
  // A group per setting that has settings inside it (`pipeline`, `s3`); the rest is `service`.
  const nested = new Set(vars.filter((v) => v.setting.includes('.')).map((v) => v.setting.split('.')[0]!))
  const groups = new Map<string, ConfigVariable[]>([['service', []]])
  for (const v of vars) {
    const head = v.setting.split('.')[0]!
    const group = nested.has(head) ? head : 'service'
    groups.set(group, [...(groups.get(group) ?? []), v])
  }
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated by `npm run docs:config` from app/config.ts; do not edit by hand. -->',
    '',
    'Every environment variable the service reads, generated from `app/config.ts` (and the loaders',
    'it calls) by `npm run docs:config`: the default is the one in the source, the meaning is the',
    'doc comment of the setting it fills. Configuration comes only from the environment, the same',
    'inside and outside compose. How the settings fit together, per feature:',
    '[operations.md](operations.md), [speech.md](speech.md), [webhooks.md](webhooks.md),',
    '[dashboard.md](dashboard.md), [mcp-oauth.md](mcp-oauth.md). Other pages: [the README](../README.md#where-to-go-next).',
    '',
    `${vars.length} variables.`,
  ]
  for (const [group, list] of groups) {
    lines.push('', `## ${group}`, '', '| variable | default | setting | meaning |', '|---|---|---|---|')
    for (const v of list) {
      lines.push(`| ${code(v.name)} | ${v.default === null || v.default === '' ? '–' : cell(code(v.default))} | ${code(v.setting)} | ${cell(v.meaning || '–')} |`)
    }
  }
  return lines.join('\n') + '\n'
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const page = renderConfigDoc()
  const before = (() => {
    try {
      return readFileSync(CONFIG_DOC, 'utf8')
    } catch {
      return ''
    }
  })()
  writeFileSync(CONFIG_DOC, page)
  console.log(`${relative(ROOT, CONFIG_DOC)}: ${page === before ? 'unchanged' : 'written'} (${configVariables().length} variables)`)
}
