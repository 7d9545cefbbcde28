// How each of the 14 analysis templates shapes the local engine's extraction: what it favours
// when ranking sentences, how many items of each kind it keeps, which facets name its key
// points ("Budget: …", "Síntomas: …"), and which branches its mind map grows. Stems are
// accent-folded, lower-case word prefixes and mix the six languages (they rarely collide).
import type { Lang } from '../languages.ts'

export interface Facet {
  label: Readonly<Record<Lang, string>>
  stems: readonly string[]
}

export type MindmapShape = 'topics' | 'meeting' | 'class' | 'debate' | 'sales' | 'care'

export interface TemplateProfile {
  /** What the remote model is told the template is for (also the README's description). */
  purpose: string
  summarySentences: number
  keyPoints: number
  topics: number
  maxActionItems: number
  maxDecisions: number
  maxQuestions: number
  /** Extra weight for sentences that are decisions, commitments, questions, carry figures or define something. */
  boost: { decisions: number; actions: number; questions: number; numbers: number; definitions: number; focus: number }
  /** Sentences touching these stems rank higher. */
  focus: readonly string[]
  /** Key points touching a facet are named after it. */
  facets: readonly Facet[]
  /** Decisions and commitments lead the summary (minutes). */
  summaryLeadsWithOutcomes: boolean
  mindmap: MindmapShape | null
}

const L = (en: string, es: string, de: string, fr: string, it: string, pt: string): Record<Lang, string> => ({ en, es, de, fr, it, pt })
const facet = (label: Record<Lang, string>, stems: string): Facet => ({ label, stems: stems.split(/\s+/).filter(Boolean) })

const BUDGET = facet(L('Budget', 'Presupuesto', 'Budget', 'Budget', 'Budget', 'Orçamento'), 'budget presupu price precio cost coste costo prix prezz preco preis kosten euro dolar dollar eur usd descuent discount rabatt remise sconto desconto invoice factur')
const TIMELINE = facet(L('Timeline', 'Plazos', 'Zeitplan', 'Calendrier', 'Tempistiche', 'Prazos'), 'deadline plazo fecha date calendar calendario schedule timeline termin frist echeanc scadenz prazo entrega deliver lanzam launch hito milestone')
const RISKS = facet(L('Risks', 'Riesgos', 'Risiken', 'Risques', 'Rischi', 'Riscos'), 'risk riesgo risiko risque rischio risco problem problema issue incidenc bloque blocker concern preocup sorge inquiet preoccup preocupa')

/**
 * Which items a template's lists hold, so each extracts what its purpose promises instead of
 * the same action items, decisions and questions everywhere:
 * - `all`: every item the cues find;
 * - `own`: only what the speaker commits to themself ("I will...", "voy a...": a coachee's commitments);
 * - `assignments`: only tasks about reading, exercises, homework or practice (a class, a therapy's exercises);
 * - `none`: the template does not promise this list (a podcast has no decisions).
 */
export type ListMode = 'all' | 'own' | 'assignments' | 'none'
export interface TemplateLists {
  actionItems: ListMode
  decisions: ListMode
  questions: ListMode
}
const ALL_LISTS: TemplateLists = { actionItems: 'all', decisions: 'all', questions: 'all' }
export const TEMPLATE_LISTS: Readonly<Record<string, TemplateLists>> = {
  journalism: { actionItems: 'none', decisions: 'none', questions: 'all' },
  education: { actionItems: 'assignments', decisions: 'none', questions: 'all' },
  university_class: { actionItems: 'assignments', decisions: 'none', questions: 'all' },
  coaching: { actionItems: 'own', decisions: 'none', questions: 'all' },
  therapy: { actionItems: 'assignments', decisions: 'none', questions: 'none' },
  podcast: { actionItems: 'none', decisions: 'none', questions: 'none' },
  debate: { actionItems: 'none', decisions: 'none', questions: 'none' },
}
export const listsOf = (template: string): TemplateLists => TEMPLATE_LISTS[template] ?? ALL_LISTS

/** Stems of tasks a class or a therapy session gives: reading, exercises, homework, practice. */
export const ASSIGNMENT_STEMS: readonly string[] =
  'read chapter homework exercis assignment essay problem practi journal worksheet paper lectur tarea deberes ejercicio lectura leer capitulo practic ensayo diario hausaufgabe ubung aufgabe lesen kapitel devoir exercice lire chapitre compito esercizi leggere capitolo tarefa exercicio ler capitulo'.split(
    ' ',
  )

export const PROFILES: Readonly<Record<string, TemplateProfile>> = {
  generic: {
    purpose: 'A balanced overview: summary, main points, commitments, decisions, open questions and topics.',
    summarySentences: 3,
    keyPoints: 6,
    topics: 6,
    maxActionItems: 15,
    maxDecisions: 10,
    maxQuestions: 8,
    boost: { decisions: 0.3, actions: 0.2, questions: 0, numbers: 0.1, definitions: 0.1, focus: 0 },
    focus: [],
    facets: [],
    summaryLeadsWithOutcomes: false,
    mindmap: 'topics',
  },
  meeting_minutes: {
    purpose: 'Minutes of a meeting: decisions and action items (owner, deadline) first, then what was discussed and what stays open.',
    summarySentences: 3,
    keyPoints: 6,
    topics: 5,
    maxActionItems: 40,
    maxDecisions: 30,
    maxQuestions: 15,
    boost: { decisions: 1.2, actions: 1.0, questions: 0.2, numbers: 0.2, definitions: 0, focus: 0.3 },
    focus: ['agenda', 'orden', 'tagesordnung', 'ordine', 'pauta', 'acuerdo', 'agreement'],
    facets: [BUDGET, TIMELINE, RISKS],
    summaryLeadsWithOutcomes: true,
    mindmap: 'meeting',
  },
  sales: {
    purpose: "A sales conversation: the customer's needs and pains, budget and pricing, objections, competitors, decision makers and next steps.",
    summarySentences: 3,
    keyPoints: 7,
    topics: 6,
    maxActionItems: 15,
    maxDecisions: 10,
    maxQuestions: 10,
    boost: { decisions: 0.5, actions: 0.6, questions: 0.2, numbers: 0.6, definitions: 0, focus: 0.6 },
    focus: ['client', 'cliente', 'kunde', 'customer', 'necesid', 'need', 'bedarf', 'besoin', 'bisogn', 'necessi', 'competi', 'compet', 'wettbew', 'concorr', 'propuest', 'proposal', 'angebot', 'propost', 'demo', 'contrat', 'contract', 'vertrag', 'licenc', 'license', 'lizenz'],
    facets: [
      BUDGET,
      facet(L('Needs', 'Necesidades', 'Bedarf', 'Besoins', 'Esigenze', 'Necessidades'), 'need necesit necesid bedarf brauch besoin bisogn esigenz necessi precis problem problema pain dolor schmerz'),
      facet(L('Objections', 'Objeciones', 'Einwände', 'Objections', 'Obiezioni', 'Objeções'), 'expensiv caro teuer cher costoso concern preocup duda doubt zweifel doute dubbio duvida objec einwand obiezion'),
      facet(L('Competition', 'Competencia', 'Wettbewerb', 'Concurrence', 'Concorrenza', 'Concorrência'), 'competi compet wettbew konkurr concurr concorr alternativ'),
      TIMELINE,
    ],
    summaryLeadsWithOutcomes: false,
    mindmap: 'sales',
  },
  legal: {
    purpose: 'A legal conversation: parties, obligations, clauses and terms, deadlines, risks and agreements.',
    summarySentences: 3,
    keyPoints: 7,
    topics: 6,
    maxActionItems: 15,
    maxDecisions: 15,
    maxQuestions: 10,
    boost: { decisions: 0.8, actions: 0.5, questions: 0.2, numbers: 0.3, definitions: 0.3, focus: 0.7 },
    focus: ['contrat', 'contract', 'vertrag', 'clausul', 'clause', 'klausel', 'ley', 'law', 'gesetz', 'loi', 'legge', 'lei', 'oblig', 'pflicht', 'derecho', 'right', 'recht', 'droit', 'diritt', 'direito', 'demanda', 'lawsuit', 'klage', 'tribunal', 'court', 'gericht', 'juzgado', 'abogad', 'lawyer', 'anwalt', 'avocat', 'avvocat', 'advogad', 'firma', 'sign', 'unterschr', 'signat', 'penal', 'multa'],
    facets: [
      facet(L('Obligations', 'Obligaciones', 'Pflichten', 'Obligations', 'Obblighi', 'Obrigações'), 'oblig pflicht verpflicht obblig deber must debe'),
      facet(L('Clauses', 'Cláusulas', 'Klauseln', 'Clauses', 'Clausole', 'Cláusulas'), 'clausul clause klausel articul article artikel'),
      TIMELINE,
      RISKS,
    ],
    summaryLeadsWithOutcomes: true,
    mindmap: 'topics',
  },
  medical: {
    purpose: 'A medical consultation: reason for the visit, symptoms, history, findings, diagnosis, medication and the plan.',
    summarySentences: 3,
    keyPoints: 7,
    topics: 6,
    maxActionItems: 12,
    maxDecisions: 10,
    maxQuestions: 10,
    boost: { decisions: 0.5, actions: 0.6, questions: 0.2, numbers: 0.4, definitions: 0.2, focus: 0.8 },
    focus: ['sintom', 'symptom', 'dolor', 'pain', 'schmerz', 'douleur', 'dolore', 'dor', 'fiebre', 'fever', 'fieber', 'fievre', 'febbre', 'febre', 'medic', 'dosis', 'dose', 'tratam', 'treatm', 'behandl', 'traitem', 'trattam', 'diagnos', 'analisi', 'analys', 'presion', 'pressure', 'tension', 'alerg', 'allerg', 'receta', 'prescri', 'rezept', 'ricett', 'mg'],
    facets: [
      facet(L('Symptoms', 'Síntomas', 'Symptome', 'Symptômes', 'Sintomi', 'Sintomas'), 'sintom symptom dolor pain schmerz douleur dolore dor fiebre fever fieber fievre febbre febre tos cough husten toux mareo dizz nause cansanc fatigue'),
      facet(L('Medication', 'Medicación', 'Medikation', 'Médicaments', 'Farmaci', 'Medicação'), 'medic farmac drug dosis dose mg pastill tablet comprim pill ibuprof paracet antibiot'),
      facet(L('Diagnosis', 'Diagnóstico', 'Diagnose', 'Diagnostic', 'Diagnosi', 'Diagnóstico'), 'diagnos analisi analys prueba test befund resultado result esito exame'),
      facet(L('Plan', 'Plan', 'Plan', 'Plan', 'Piano', 'Plano'), 'tratam treatm behandl traitem trattam control seguim follow revisi cita appointm termin'),
    ],
    summaryLeadsWithOutcomes: false,
    mindmap: 'care',
  },
  journalism: {
    purpose: 'An interview or report: who said what (quotable statements with their speaker), claims, figures and facts to check.',
    summarySentences: 3,
    keyPoints: 7,
    topics: 6,
    maxActionItems: 8,
    maxDecisions: 6,
    maxQuestions: 12,
    boost: { decisions: 0.2, actions: 0.1, questions: 0.3, numbers: 0.8, definitions: 0.1, focus: 0.4 },
    focus: ['dato', 'data', 'daten', 'donnee', 'fuente', 'source', 'quelle', 'fonte', 'informe', 'report', 'bericht', 'rapport', 'rapporto', 'relatori', 'percent', 'porcent', 'prozent', 'pourcent', 'million', 'millon', 'milion'],
    facets: [facet(L('Figures', 'Cifras', 'Zahlen', 'Chiffres', 'Cifre', 'Números'), 'percent porcent prozent pourcent million millon milion mil thousand tausend mille euro dolar dollar')],
    summaryLeadsWithOutcomes: false,
    mindmap: 'topics',
  },
  education: {
    purpose: 'A lesson or training: learning goals, concepts and definitions, examples, exercises and questions.',
    summarySentences: 3,
    keyPoints: 7,
    topics: 8,
    maxActionItems: 10,
    maxDecisions: 5,
    maxQuestions: 12,
    boost: { decisions: 0, actions: 0.3, questions: 0.4, numbers: 0.1, definitions: 0.9, focus: 0.5 },
    focus: ['concept', 'concepto', 'konzept', 'ejemplo', 'example', 'beispiel', 'exemple', 'esempio', 'exemplo', 'ejercic', 'exercis', 'ubung', 'exercic', 'eserciz', 'objetiv', 'objective', 'goal', 'lernziel', 'obiettiv', 'aprend', 'learn', 'lernen', 'apprend', 'impar'],
    facets: [
      facet(L('Concept', 'Concepto', 'Begriff', 'Concept', 'Concetto', 'Conceito'), 'concept concepto konzept begriff defin concetto conceito'),
      facet(L('Exercise', 'Ejercicio', 'Übung', 'Exercice', 'Esercizio', 'Exercício'), 'ejercic exercis ubung aufgabe exercic eserciz tarea homework deberes devoir compiti'),
    ],
    summaryLeadsWithOutcomes: false,
    mindmap: 'class',
  },
  customer_success: {
    purpose: 'A customer success call: health of the account, issues raised, satisfaction, renewal or churn risk, feature requests and follow-ups.',
    summarySentences: 3,
    keyPoints: 7,
    topics: 6,
    maxActionItems: 15,
    maxDecisions: 10,
    maxQuestions: 10,
    boost: { decisions: 0.4, actions: 0.8, questions: 0.2, numbers: 0.3, definitions: 0, focus: 0.7 },
    focus: ['renova', 'renew', 'verlang', 'renouvel', 'rinnov', 'churn', 'cancel', 'kundig', 'annul', 'disdett', 'satisf', 'zufried', 'soddisf', 'incidenc', 'ticket', 'soporte', 'support', 'bug', 'error', 'fehler', 'erreur', 'errore', 'erro', 'feature', 'funcional', 'funktion', 'fonction', 'funzion', 'adopci', 'adoption', 'usuario', 'user'],
    facets: [
      facet(L('Issues', 'Incidencias', 'Probleme', 'Problèmes', 'Problemi', 'Problemas'), 'incidenc ticket bug error fehler erreur errore erro problem problema falla fallo caida outage lento slow'),
      facet(L('Renewal', 'Renovación', 'Verlängerung', 'Renouvellement', 'Rinnovo', 'Renovação'), 'renova renew verlang renouvel rinnov churn cancel kundig annul disdett contrat contract'),
      facet(L('Feature requests', 'Peticiones', 'Wünsche', 'Demandes', 'Richieste', 'Pedidos'), 'feature funcional funktion fonction funzion integrac integrat peticion request wunsch demande richiest pedido'),
    ],
    summaryLeadsWithOutcomes: false,
    mindmap: 'care',
  },
  consulting: {
    purpose: 'A consulting session: the situation, findings, recommendations, metrics, risks and the agreed next steps.',
    summarySentences: 3,
    keyPoints: 7,
    topics: 6,
    maxActionItems: 15,
    maxDecisions: 12,
    maxQuestions: 10,
    boost: { decisions: 0.6, actions: 0.6, questions: 0.2, numbers: 0.5, definitions: 0.1, focus: 0.6 },
    focus: ['recomend', 'recommend', 'empfehl', 'recommand', 'raccomand', 'recomenda', 'estrateg', 'strateg', 'kpi', 'metric', 'metrica', 'objetiv', 'objective', 'ziel', 'proceso', 'process', 'prozess', 'processo', 'mejora', 'improv', 'verbess', 'amelior', 'miglior', 'melhor'],
    facets: [
      facet(L('Recommendation', 'Recomendación', 'Empfehlung', 'Recommandation', 'Raccomandazione', 'Recomendação'), 'recomend recommend empfehl recommand raccomand recomenda suger suggest propon propos vorschl'),
      facet(L('Metrics', 'Métricas', 'Kennzahlen', 'Indicateurs', 'Metriche', 'Métricas'), 'kpi metric metrica kennzahl indicat indicad percent porcent prozent pourcent'),
      RISKS,
    ],
    summaryLeadsWithOutcomes: true,
    mindmap: 'topics',
  },
  coaching: {
    purpose: 'A coaching session: goals, obstacles, insights, commitments the coachee makes and how progress will be checked.',
    summarySentences: 3,
    keyPoints: 6,
    topics: 5,
    maxActionItems: 12,
    maxDecisions: 8,
    maxQuestions: 10,
    boost: { decisions: 0.4, actions: 0.9, questions: 0.4, numbers: 0, definitions: 0, focus: 0.7 },
    focus: ['objetiv', 'goal', 'ziel', 'objectif', 'obiettiv', 'meta', 'obstacul', 'obstacle', 'hindern', 'ostacol', 'habit', 'habito', 'gewohn', 'abitud', 'progres', 'fortschr', 'progress', 'compromi', 'commit', 'motiva', 'confian', 'confid', 'vertrau'],
    facets: [
      facet(L('Goal', 'Objetivo', 'Ziel', 'Objectif', 'Obiettivo', 'Objetivo'), 'objetiv goal ziel objectif obiettiv meta proposit purpose'),
      facet(L('Obstacle', 'Obstáculo', 'Hindernis', 'Obstacle', 'Ostacolo', 'Obstáculo'), 'obstacul obstacle hindern ostacol bloque block miedo fear angst peur paura medo dificult difficult schwier'),
    ],
    summaryLeadsWithOutcomes: false,
    mindmap: 'care',
  },
  therapy: {
    purpose: 'A therapy session: what the client brings, feelings and situations described, patterns noticed, coping strategies and agreed exercises.',
    summarySentences: 3,
    keyPoints: 6,
    topics: 5,
    maxActionItems: 8,
    maxDecisions: 6,
    maxQuestions: 10,
    boost: { decisions: 0.2, actions: 0.5, questions: 0.3, numbers: 0, definitions: 0, focus: 0.8 },
    focus: ['siento', 'sient', 'feel', 'fuhl', 'sens', 'sento', 'sinto', 'ansied', 'anxi', 'angst', 'ansia', 'tristez', 'sad', 'traurig', 'triste', 'estres', 'stress', 'miedo', 'fear', 'peur', 'paura', 'medo', 'dormir', 'sleep', 'schlaf', 'sommeil', 'sonno', 'sono', 'relaci', 'relation', 'bezieh', 'emoci', 'emotion', 'gefuhl', 'emozion', 'emocao'],
    facets: [
      facet(L('Feelings', 'Emociones', 'Gefühle', 'Émotions', 'Emozioni', 'Emoções'), 'siento sient feel fuhl sens sento sinto ansied anxi angst ansia tristez sad traurig triste estres stress miedo fear peur paura medo emoci emotion gefuhl emozion emocao'),
      facet(L('Coping', 'Estrategias', 'Bewältigung', 'Stratégies', 'Strategie', 'Estratégias'), 'respira breath atm respir ejercic exercis ubung exercic eserciz estrateg strateg tecnica technique technik diario journal tagebuch'),
    ],
    summaryLeadsWithOutcomes: false,
    mindmap: 'care',
  },
  podcast: {
    purpose: 'A podcast episode: the themes, the most quotable moments, guests and recommendations mentioned.',
    summarySentences: 3,
    keyPoints: 7,
    topics: 8,
    maxActionItems: 6,
    maxDecisions: 5,
    maxQuestions: 8,
    boost: { decisions: 0, actions: 0, questions: 0.3, numbers: 0.3, definitions: 0.2, focus: 0.3 },
    focus: ['historia', 'story', 'geschicht', 'histoire', 'storia', 'libro', 'book', 'buch', 'livre', 'recomiend', 'recommend', 'empfehl', 'invitad', 'guest', 'gast', 'invite', 'ospite', 'convidad', 'episodio', 'episode', 'folge'],
    facets: [],
    summaryLeadsWithOutcomes: false,
    mindmap: 'topics',
  },
  university_class: {
    purpose: 'A university lecture: topics in order, concepts and definitions, examples, students’ questions, readings and assignments.',
    summarySentences: 3,
    keyPoints: 8,
    topics: 10,
    maxActionItems: 10,
    maxDecisions: 5,
    maxQuestions: 15,
    boost: { decisions: 0, actions: 0.3, questions: 0.6, numbers: 0.1, definitions: 1.2, focus: 0.6 },
    focus: ['teori', 'theor', 'concept', 'concepto', 'begriff', 'defin', 'ejemplo', 'example', 'beispiel', 'exemple', 'esempio', 'exemplo', 'examen', 'exam', 'prufung', 'esame', 'exame', 'lectura', 'reading', 'lektur', 'lettura', 'leitura', 'formula', 'ecuaci', 'equation', 'gleich', 'modelo', 'model'],
    facets: [
      facet(L('Definition', 'Definición', 'Definition', 'Définition', 'Definizione', 'Definição'), 'defin called significa means bedeut signif'),
      facet(L('Example', 'Ejemplo', 'Beispiel', 'Exemple', 'Esempio', 'Exemplo'), 'ejemplo example beispiel exemple esempio exemplo'),
      facet(L('Assignment', 'Tarea', 'Aufgabe', 'Devoir', 'Compito', 'Tarefa'), 'tarea homework deberes aufgabe hausaufg devoir compiti tarefa entrega lectura reading examen exam prufung esame exame'),
    ],
    summaryLeadsWithOutcomes: false,
    mindmap: 'class',
  },
  debate: {
    purpose: 'A debate: each side’s positions, the arguments behind them, notable quotes, where they agree and where they disagree.',
    summarySentences: 3,
    keyPoints: 6,
    topics: 6,
    maxActionItems: 5,
    maxDecisions: 5,
    maxQuestions: 10,
    boost: { decisions: 0.2, actions: 0, questions: 0.2, numbers: 0.3, definitions: 0, focus: 0.5 },
    focus: ['argument', 'argumento', 'postura', 'position', 'posicion', 'posizion', 'posicao', 'creo', 'think', 'glaube', 'pense', 'penso', 'acho', 'acuerdo', 'agree', 'einverst', 'accord', 'concordo'],
    facets: [],
    summaryLeadsWithOutcomes: false,
    mindmap: 'debate',
  },
}

/** Every facet label in every language: what a key point may be prefixed with ("Budget: …"). */
export const FACET_LABELS: ReadonlySet<string> = new Set(Object.values(PROFILES).flatMap((p) => p.facets.flatMap((f) => Object.values(f.label))))

/** A key point without the facet label the template named it with. */
export function withoutFacet(keyPoint: string): string {
  const colon = keyPoint.indexOf(': ')
  return colon > 0 && FACET_LABELS.has(keyPoint.slice(0, colon)) ? keyPoint.slice(colon + 2) : keyPoint
}

export function profileOf(template: string): TemplateProfile {
  const p = PROFILES[template]
  if (!p) throw new Error(`unknown analysis template ${template}`)
  return p
}

/** Branch names of the mind maps. */
export const BRANCH: Readonly<Record<string, Record<Lang, string>>> = {
  decisions: L('Decisions', 'Decisiones', 'Entscheidungen', 'Décisions', 'Decisioni', 'Decisões'),
  actions: L('Action items', 'Tareas', 'Aufgaben', 'Actions', 'Azioni', 'Tarefas'),
  questions: L('Open questions', 'Preguntas abiertas', 'Offene Fragen', 'Questions ouvertes', 'Domande aperte', 'Perguntas em aberto'),
  positions: L('Positions', 'Posturas', 'Positionen', 'Positions', 'Posizioni', 'Posições'),
  agreements: L('Agreements', 'Acuerdos', 'Übereinstimmungen', 'Accords', 'Accordi', 'Acordos'),
  disagreements: L('Disagreements', 'Desacuerdos', 'Meinungsverschiedenheiten', 'Désaccords', 'Disaccordi', 'Desacordos'),
}
