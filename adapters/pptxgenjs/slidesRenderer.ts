// Slide decks as .pptx through `pptxgenjs` (the only file importing it). A title slide, then one
// slide per section; a section with many points continues on the next slide.
import pptxgenjs from 'pptxgenjs'
import type { FileRenderer, RenderInput } from '../../ports/fileRenderer.ts'

const PER_SLIDE = 7
// The package's types are CommonJS-shaped under NodeNext resolution; at run time its ESM build's
// default export is the class itself.
const PptxGenJS = pptxgenjs as unknown as typeof pptxgenjs.default

export function pptxRenderer(): FileRenderer {
  return {
    async render(d: RenderInput) {
      const deck = new PptxGenJS()
      deck.layout = 'LAYOUT_16x9'
      deck.author = d.author
      deck.title = d.title
      deck.subject = d.subject ?? d.title
      const cover = deck.addSlide()
      cover.addText(d.title, { x: 0.5, y: 1.8, w: 9, h: 1.2, fontSize: 32, bold: true, align: 'center', fit: 'shrink' })
      cover.addText(new Date(d.createdAt).toISOString().slice(0, 10), { x: 0.5, y: 3.2, w: 9, h: 0.5, fontSize: 14, align: 'center', color: '666666' })
      for (const s of d.sections) {
        const points = s.bullets.length > 0 ? s.bullets : s.paragraphs
        const pages = Math.max(1, Math.ceil(points.length / PER_SLIDE))
        for (let p = 0; p < pages; p++) {
          const slide = deck.addSlide()
          const heading = s.heading || d.title
          slide.addText(pages > 1 && p > 0 ? `${heading} (${p + 1})` : heading, { x: 0.5, y: 0.3, w: 9, h: 0.8, fontSize: 26, bold: true, fit: 'shrink' })
          const chunk = points.slice(p * PER_SLIDE, (p + 1) * PER_SLIDE)
          if (chunk.length > 0) {
            slide.addText(
              chunk.map((text) => ({ text, options: { bullet: s.bullets.length > 0, breakLine: true } })),
              { x: 0.6, y: 1.3, w: 8.8, h: 3.9, fontSize: 16, valign: 'top', fit: 'shrink' },
            )
          }
        }
      }
      return (await deck.write({ outputType: 'nodebuffer' })) as Buffer
    },
  }
}
