// Documents as .docx through the `docx` library (the only file importing it).
import { Document, HeadingLevel, Packer, Paragraph, TextRun } from 'docx'
import type { FileRenderer, RenderInput } from '../../ports/fileRenderer.ts'

export function docxRenderer(): FileRenderer {
  return {
    async render(d: RenderInput) {
      const children: Paragraph[] = [new Paragraph({ text: d.title, heading: HeadingLevel.TITLE })]
      for (const s of d.sections) {
        if (s.heading) children.push(new Paragraph({ text: s.heading, heading: HeadingLevel.HEADING_1 }))
        for (const p of s.paragraphs) children.push(new Paragraph({ children: [new TextRun(p)] }))
        for (const b of s.bullets) children.push(new Paragraph({ children: [new TextRun(b)], bullet: { level: 0 } }))
      }
      const doc = new Document({
        creator: d.author,
        title: d.title,
        description: d.subject ?? d.title,
        sections: [{ children }],
      })
      return Packer.toBuffer(doc)
    },
  }
}
