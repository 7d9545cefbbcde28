// Deliverable kinds and their templates (spec part 4), exactly as the contract lists them.
export const DELIVERABLE_TEMPLATES = {
  email: ['follow_up', 'recap', 'next_steps', 'thank_you'],
  document: ['project_brief', 'meeting_recap', 'fiscal_revision', 'legal_acta', 'medical_consult'],
  slides: ['exec_summary', 'kickoff', 'recap_visual', 'sales_pitch_es'],
} as const
export type DeliverableKind = keyof typeof DELIVERABLE_TEMPLATES
export const DELIVERABLE_LOCALES = ['es', 'en'] as const
