// Renders a deliverable into a real file: .eml (email), .docx (document), .pptx (slides). One
// adapter per library (adapters/nodemailer, adapters/docx, adapters/pptxgenjs).
import type { DeliverableSection } from '../domain/language/content.ts'

export interface RenderInput {
  /** Deliverable id: makes the file's own ids (Message-ID...) stable. */
  id: string
  title: string
  subject: string | null
  sections: readonly DeliverableSection[]
  locale: 'es' | 'en'
  /** ISO date-time the file says it was made. */
  createdAt: string
  /** Who the file says made it. */
  author: string
}

export interface FileRenderer {
  render(input: RenderInput): Promise<Buffer>
}
