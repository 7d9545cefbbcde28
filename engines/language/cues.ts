// Cue patterns of the local engine, in the six languages. Every pattern is written against the
// accent-folded, lower-case sentence (`Sentence.low`), whose character positions equal the
// original's, so a match can be cut out of the text as said.
import type { Lang } from '../../domain/languages.ts'

/** Who a commitment cue speaks of: the speaker (1), the one addressed (2), a named third person (3), or the group. */
export type Person = 1 | 2 | 3 | 'we' | 'subject'

export interface CommitmentCue {
  re: RegExp
  person: Person
}

const cue = (person: Person, ...phrases: string[]): CommitmentCue => ({ re: new RegExp(`(?:^|[\\s,;:¿¡])(?:${phrases.join('|')})(?=[\\s,])`, 'g'), person })

/**
 * Commitment cues: the task follows the cue; who does it comes from the cue's person (1: the
 * speaker; 3: the capitalised name right before it; 2: the person addressed by name; `subject`:
 * the pronoun or name right before it decides).
 */
export const COMMITMENT: Readonly<Record<Lang, CommitmentCue[]>> = {
  en: [
    // The subject (a pronoun or a name) is captured: "Ana will", "I'll", "we'll".
    { re: /(?:^|[\s,;:])([\p{L}'-]+?)(?:\s+will|'ll|\s+shall)(?=\s)/gu, person: 'subject' },
    cue(1, "i'm going to", 'i am going to', "i'm gonna", 'i can take care of', 'let me', "i'm on it,? i'll", 'i(?: will|\'ll)? take care of', 'i(?: will|\'ll)? handle', 'i(?: will|\'ll)? own', 'i need to', 'i have to', 'i must'),
    cue(3, 'is going to', 'is gonna', 'needs to', 'has to', 'must', 'should', 'takes care of', 'is taking care of', 'is responsible for', 'is in charge of', 'owns', 'is handling'),
    cue('we', "we're going to", 'we are going to', 'we need to', 'we have to', 'we should', 'we must', "let's", 'someone needs to', 'somebody needs to', 'someone should', 'somebody should'),
    cue(2, 'can you', 'could you', 'would you', 'will you', 'you need to', 'you have to', 'you should', 'please'),
  ],
  es: [
    // "yo llamo al cliente", "yo preparo el informe": the present with an explicit "yo" commits.
    { re: /(?:^|[\s,;:¿¡])yo(?=\s+(?!no\s)\p{L}{3,}o\s)/gu, person: 1 },
    cue(1, 'me encargo de', 'me encargare de', 'me ocupo de', 'me ocupare de', 'voy a', 'tengo que', 'me comprometo a', 'debo', 'quedo en', 'yo me encargo de', 'lo hago yo', 'yo lo preparo', 'yo preparo', 'yo envio', 'yo mando'),
    cue(3, 'se encarga de', 'se encargara de', 'se ocupa de', 'se ocupara de', 'va a', 'tiene que', 'debe', 'debera', 'deberia', 'queda en', 'se compromete a', 'sera responsable de', 'es responsable de', 'se queda con'),
    cue('we', 'tenemos que', 'hay que', 'habria que', 'debemos', 'deberiamos', 'necesitamos', 'vamos a tener que', 'alguien tiene que', 'alguien debe', 'queda pendiente'),
    cue(2, 'puedes', 'podrias', 'te encargas de', 'te puedes encargar de', 'te encargarias de', 'tienes que', 'debes', 'por favor'),
  ],
  de: [
    cue(1, 'ich werde', 'ich kummere mich um', 'ich ubernehme', 'ich muss', 'ich kann'),
    cue(3, 'wird', 'muss', 'soll', 'sollte', 'kummert sich um', 'ubernimmt', 'ist verantwortlich fur'),
    cue('we', 'wir mussen', 'wir sollten', 'wir werden', 'lass uns', 'lasst uns', 'jemand muss'),
    cue(2, 'kannst du', 'konntest du', 'kannst du bitte', 'bitte', 'du musst', 'kummerst du dich um'),
  ],
  fr: [
    cue(1, 'je vais', "je m'occupe de", "je m'occuperai de", 'je me charge de', 'je dois', 'je peux'),
    cue(3, 'va', 'doit', 'devra', "s'occupe de", "s'occupera de", 'se charge de', 'est responsable de'),
    cue('we', 'il faut', 'il faudra', 'il faudrait', 'on doit', 'nous devons', 'on va', 'nous allons', 'quelqu\'un doit'),
    cue(2, 'tu peux', 'peux-tu', 'pourrais-tu', 'tu pourrais', 'est-ce que tu peux', 'vous pouvez', 'pouvez-vous', "s'il te plait", "s'il vous plait"),
  ],
  it: [
    cue(1, 'mi occupo (?:io )?di', 'me ne occupo', 'vado a', 'devo', 'posso', 'faccio io', 'preparo io'),
    cue(3, 'si occupa di', 'si occupera di', 'deve', 'dovra', 'fara', 'va a', 'e responsabile di'),
    cue('we', 'dobbiamo', 'bisogna', 'bisognera', 'dovremmo', 'qualcuno deve'),
    cue(2, 'puoi', 'potresti', 'ti occupi tu di', 'per favore', 'devi'),
  ],
  pt: [
    cue(1, 'eu vou', 'vou', 'eu fico com', 'fico responsavel por', 'eu me encarrego de', 'me encarrego de', 'deixa comigo', 'tenho que', 'preciso'),
    cue(3, 'vai', 'deve', 'devera', 'tem que', 'fica responsavel por', 'se encarrega de', 'e responsavel por'),
    cue('we', 'precisamos', 'temos que', 'devemos', 'vamos ter que', 'alguem precisa'),
    cue(2, 'voce pode', 'pode', 'podes', 'poderia', 'por favor', 'voce precisa'),
  ],
}

/** Explicit markers ("action item: ...") whose rest is the task. */
export const EXPLICIT_TASK = /(?:^|\s)(?:action items?|to-?do|next steps?|tarea|pendiente|accion|aufgabe|todo|a faire|action|da fare|compito|tarefa|proximo passo)\s*:\s*/g

/** First-person future forms ("enviaré", "preparerò", "enviarei"): the speaker commits. */
export const FIRST_PERSON_FUTURE: Partial<Record<Lang, RegExp>> = {
  es: /(?:^|\s)(?:yo\s+)?(\p{L}{3,}(?:are|ere|ire))(?=\s)/gu,
  it: /(?:^|\s)(?:io\s+)?(\p{L}{3,}(?:ero|iro|aro))(?=\s)/gu,
  pt: /(?:^|\s)(?:eu\s+)?(\p{L}{3,}(?:arei|erei|irei))(?=\s)/gu,
  fr: /(?:^|\s)(?:je|j')\s*(\p{L}{3,}(?:erai|irai|rai))(?=\s)/gu,
}

/** Verbs after a cue that make it talk about the meeting itself or a state, not a task. */
export const NOT_A_TASK = new Set(
  `be being been become see look start begin continue move talk discuss say think check in go over recap wrap get started hear repeat mute unmute explain
   repetir oir escuchar explicar
   ser estar ver empezar comenzar continuar seguir hablar pasar decir pensar repasar resumir terminar acabar haber
   sein werden sehen anfangen beginnen weitermachen reden sprechen sagen denken
   etre voir commencer continuer parler dire penser passer
   essere stare vedere iniziare cominciare continuare parlare dire pensare passare
   ser estar ver comecar continuar falar dizer pensar passar haver`
    .split(/\s+/)
    .filter(Boolean),
)

/** Tasks about the call itself ("share your screen", "compartir pantalla"). */
export const META_TASK = /^(?:share|compartir|teilen|partager|condividere|compartilhar)\s+(?:(?:your|my|the|tu|mi|la|deinen|meinen|den|ton|mon|l'|il|tuo|mio|o|a|seu|meu)\s+)?(?:screen|pantalla|bildschirm|ecran|schermo|tela)\b/

/** A negation right before or after a cue turns a commitment or a decision off. */
export const NEGATION = /(?:^|\s)(?:not|n't|never|no|nunca|nicht|kein|keine|nie|ne|pas|jamais|non|mai|nao|ainda nao|todavia no|aun no|not yet|haven't|have not|hasn't|didn't)(?=[\s,.]|$)/

/** Decision cues. */
export const DECISION: Readonly<Record<Lang, RegExp>> = {
  en: /(?:^|\s)(?:we(?:'ve| have)? (?:decided|agreed)|(?:it(?:'s| is| was) )?decided|(?:the |our |final )?decision (?:is|was)|we(?:'re| are) going with|let's go with|we(?:'ll| will) go with|(?:it(?:'s| is) )?agreed(?: that)?|approved|we settled on|we(?:'ve| have)? chosen|we chose|we(?:'re| are) moving forward with|the consensus is|we confirmed)(?=[\s,:.]|$)/,
  es: /(?:^|\s)(?:(?:hemos |habiamos )?decidido|decidimos|acordamos|hemos acordado|queda(?:mos)? (?:acordado|decidido|en que)|se (?:decide|decidio|acuerda|acordo|aprueba|aprobo)|(?:la |nuestra )?decision (?:es|fue|final)|aprobad[oa]s?|vamos con|nos quedamos con|optamos por|elegimos|confirmamos|de acuerdo entonces|entonces queda)(?=[\s,:.]|$)/,
  de: /(?:^|\s)(?:wir haben (?:entschieden|beschlossen|vereinbart)|(?:ist )?beschlossen|entschieden|wir einigen uns|wir haben uns (?:geeinigt|entschieden)|die entscheidung (?:ist|lautet)|genehmigt|vereinbart)(?=[\s,:.]|$)/,
  fr: /(?:^|\s)(?:(?:nous avons|on a) (?:decide|convenu|choisi|valide|retenu)|c'est decide|(?:la )?decision (?:est|finale)|valide|approuve|on part sur|nous partons sur|il est convenu)(?=[\s,:.]|$)/,
  it: /(?:^|\s)(?:abbiamo (?:deciso|concordato|scelto|approvato)|(?:e )?deciso|(?:la )?decisione (?:e|finale)|approvat[oa]|siamo d'accordo (?:che|su)|andiamo con|confermiamo)(?=[\s,:.]|$)/,
  pt: /(?:^|\s)(?:decidimos|(?:ficou |foi )?decidido|combinamos|acordamos|(?:a )?decisao (?:e|foi|final)|aprovad[oa]|vamos com|optamos por|escolhemos|confirmamos)(?=[\s,:.]|$)/,
}

/** Open questions said without a question mark. */
export const OPEN_QUESTION: Readonly<Record<Lang, RegExp>> = {
  en: /(?:^|\s)(?:open question|still unclear|(?:we|i) (?:still )?(?:don't|do not) know (?:yet )?(?:whether|if|how|when|who)|(?:need|have) to figure out (?:whether|if|how)|to be determined|tbd|haven't decided (?:yet )?(?:whether|if|on))(?=[\s,:.]|$)/,
  es: /(?:^|\s)(?:pregunta abierta|queda por (?:ver|definir|decidir|saber)|no sabemos (?:todavia |aun )?(?:si|como|cuando|quien)|esta por ver|falta (?:decidir|definir|saber)|sin decidir|no (?:hemos|esta) decidido (?:todavia |aun )?(?:si)?)(?=[\s,:.]|$)/,
  de: /(?:^|\s)(?:offene frage|unklar(?:,)? ob|wir wissen (?:noch )?nicht,? ob|noch (?:nicht )?entschieden(?:,)? ob)(?=[\s,:.]|$)/,
  fr: /(?:^|\s)(?:question ouverte|on ne sait pas (?:encore )?si|reste a (?:voir|definir|decider)|pas encore decide)(?=[\s,:.]|$)/,
  it: /(?:^|\s)(?:domanda aperta|non sappiamo (?:ancora )?se|resta da (?:vedere|decidere|definire)|ancora da decidere)(?=[\s,:.]|$)/,
  pt: /(?:^|\s)(?:questao em aberto|pergunta em aberto|nao sabemos (?:ainda )?se|falta (?:decidir|definir)|ainda nao decidimos)(?=[\s,:.]|$)/,
}

/** Questions that only manage the conversation ("right?", "any questions?"). */
export const IDLE_QUESTION =
  /^(?:(?:right|ok(?:ay)?|yes|no|really|sorry|what|huh|vale|verdad|si|claro|oder|ja|nicht wahr|d'accord|n'est-ce pas|vero|giusto|certo|ne|nao e|correct|correcto|ok then)[\s,]*[?!.]*$|(?:any (?:other )?questions|alguna (?:otra )?pregunta|(?:can|do) (?:you|everyone|you all) hear me|me (?:oyes|ois|escuchais|escuchas)|(?:se|me) (?:me )?oye bien|does (?:that|this) make sense|tiene sentido|todo claro|everything clear|all good|estamos todos|entendido|questions so far|preguntas hasta ahora)\b)/

/** Deadlines as said. The match is kept verbatim as the action item's `deadline`. */
export const DEADLINE: Readonly<Record<Lang, RegExp>> = {
  en: /(?:^|\s)((?:by|before|until|till|no later than|due|on|this|next|by next)\s+(?:the\s+)?(?:end of (?:the )?(?:day|week|month|quarter|year|sprint)|(?:next |this )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month|quarter|sprint)|tomorrow|tonight|today|noon|eod|eow|(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.? \d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)?(?: of)? (?:january|february|march|april|may|june|july|august|september|october|november|december))|(?:tomorrow|tonight|end of (?:the )?(?:day|week|month|quarter))|in (?:two|three|four|\d+) (?:days|weeks))(?=[\s,.;:!?]|$)/,
  es: /(?:^|\s)((?:para|antes de(?:l)?|hasta|a mas tardar|como tarde|el|este|esta|la|en)\s+(?:el\s+|la\s+|este\s+|esta\s+|proximo\s+|proxima\s+)?(?:lunes|martes|miercoles|jueves|viernes|sabado|domingo|manana|semana que viene|proxima semana|mes que viene|proximo mes|\d{1,2} de (?:enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre)|fin(?:al)? de (?:mes|semana|ano|trimestre)|finales de (?:mes|semana|ano|trimestre)|dos semanas|(?:una|dos|tres) semanas?)(?: que viene)?|(?:manana|pasado manana|esta semana|la semana que viene|la proxima semana|a finales de (?:mes|semana))|en (?:dos|tres|\d+) (?:dias|semanas))(?=[\s,.;:!?]|$)/,
  de: /(?:^|\s)((?:bis|vor|am|zum|nachste|nachsten|diese|diesen)\s+(?:zum\s+|nachsten\s+|nachste\s+|ende\s+)?(?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|morgen|woche|monat|ende der woche|ende des monats|monatsende|\d{1,2}\.(?: (?:januar|februar|marz|april|mai|juni|juli|august|september|oktober|november|dezember))?)|(?:morgen|ubermorgen|nachste woche|diese woche|ende der woche))(?=[\s,.;:!?]|$)/,
  fr: /(?:^|\s)((?:d'ici|avant|pour|jusqu'a|au plus tard|des)\s+(?:le\s+|la\s+|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|demain|la fin de (?:la semaine|du mois|l'annee)|la semaine prochaine|\d{1,2} (?:janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre))(?:\s*(?:lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|prochain|\d{1,2}))?|(?:demain|la semaine prochaine|(?:lundi|mardi|mercredi|jeudi|vendredi) prochain|cette semaine|fin de (?:semaine|mois)))(?=[\s,.;:!?]|$)/,
  it: /(?:^|\s)((?:entro|prima di|per|fino a)\s+(?:il\s+|la\s+|lunedi|martedi|mercoledi|giovedi|venerdi|sabato|domenica|domani|fine (?:settimana|mese|anno)|la fine del(?:la)? (?:settimana|mese)|la prossima settimana|\d{1,2} (?:gennaio|febbraio|marzo|aprile|maggio|giugno|luglio|agosto|settembre|ottobre|novembre|dicembre))(?:\s*(?:lunedi|martedi|mercoledi|giovedi|venerdi|prossimo|\d{1,2}))?|(?:domani|dopodomani|la prossima settimana|settimana prossima|(?:lunedi|martedi|mercoledi|giovedi|venerdi) prossimo|questa settimana))(?=[\s,.;:!?]|$)/,
  pt: /(?:^|\s)((?:ate|antes de|para|no mais tardar)\s+(?:a\s+|o\s+|ao\s+)?(?:segunda|terca|quarta|quinta|sexta|sabado|domingo|amanha|fim do mes|final do mes|fim da semana|final da semana|proxima semana|\d{1,2} de (?:janeiro|fevereiro|marco|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro))(?:-feira)?|(?:amanha|depois de amanha|na proxima semana|semana que vem|esta semana|(?:na )?(?:segunda|terca|quarta|quinta|sexta)(?:-feira)?))(?=[\s,.;:!?]|$)/,
}

/** A sentence that defines or explains (classes favour them). */
export const DEFINITION = /(?:^|\s)(?:is defined as|is called|means|refers to|in other words|that is|se define como|se llama|significa|es decir|o sea|se refiere a|bedeutet|heisst|das heisst|definiert als|signifie|c'est-a-dire|on appelle|significa|cioe|si chiama|ou seja|chama-se|quer dizer)(?=[\s,:]|$)/

/** Debate section cues. */
export const STANCE = /(?:^|\s)(?:i think|i believe|in my (?:opinion|view)|my position is|i(?:'m| am) convinced|i support|i oppose|i(?:'m| am) (?:for|against)|creo que|pienso que|opino que|en mi opinion|considero que|estoy convencid[oa]|mi postura|defiendo|estoy a favor|estoy en contra|ich glaube|ich denke|meiner meinung nach|ich bin der meinung|ich finde|je pense que|je crois que|a mon avis|selon moi|je suis convaincu|je suis pour|je suis contre|penso che|credo che|secondo me|a mio avviso|sono convint[oa]|sono favorevole|sono contrari[oa]|acho que|acredito que|na minha opiniao|sou a favor|sou contra)(?=[\s,:]|$)/
export const ARGUMENT = /(?:^|\s)(?:because|since|the reason is|for example|for instance|the data|evidence|studies show|porque|ya que|puesto que|por ejemplo|los datos|la razon|weil|denn|zum beispiel|die daten|parce que|car|puisque|par exemple|les donnees|perche|poiche|ad esempio|i dati|pois|por exemplo|os dados)(?=[\s,:]|$)/
export const AGREEMENT = /(?:^|\s)(?:i agree|i totally agree|agreed|exactly|you're right|you are right|good point|that's true|fair point|estoy de acuerdo|de acuerdo contigo|exacto|tienes razon|es cierto|buen punto|einverstanden|da stimme ich (?:dir )?zu|ich stimme zu|du hast recht|je suis d'accord|exactement|tu as raison|sono d'accordo|esatto|hai ragione|concordo|exatamente|voce tem razao|tens razao)(?=[\s,.!:]|$)/
export const DISAGREEMENT = /(?:^|\s)(?:i disagree|i don't agree|i do not agree|that's not true|not true|that's wrong|i don't think so|on the contrary|no estoy de acuerdo|discrepo|no es cierto|no es verdad|al contrario|no creo que|ich stimme nicht zu|das stimmt nicht|im gegenteil|je ne suis pas d'accord|c'est faux|au contraire|non sono d'accordo|non e vero|nao concordo|discordo|nao e verdade|pelo contrario)(?=[\s,.!:]|$)/

/** Fillers a sentence may open with, dropped from extracted items. */
export const LEAD_FILLER =
  /^(?:(?:ok(?:ay)?|so|well|right|alright|also|and|then|now|yes|yeah|great|perfect|bueno|vale|pues|entonces|y|ademas|perfecto|genial|claro|si|also|gut|ja|und|dann|alors|bon|donc|et|bien|ok|allora|bene|quindi|e|poi|entao|bem|pois|certo)[,\s]+)+/i

/** Words that may open a task without being part of it ("also send ...", "need to coordinate ..."). */
export const TASK_FILLER =
  /^(?:(?:also|just|then|really|definitely|probably|need to|have to|tambien|ademas|luego|auch|noch|dann|aussi|ensuite|anche|poi|tambem|depois)\s+)+/

/** "and" in each language, for joining headline phrases. */
export const AND: Readonly<Record<Lang, string>> = { en: 'and', es: 'y', de: 'und', fr: 'et', it: 'e', pt: 'e' }
