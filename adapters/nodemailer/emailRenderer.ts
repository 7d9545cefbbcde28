// Emails as .eml (RFC 5322, MIME multipart/alternative: plain text and HTML) through
// nodemailer's MailComposer (the only file importing nodemailer). Nothing is sent: the file is a
// draft (X-Unsent: 1) for the user to open in a mail client and address.
import MailComposer from 'nodemailer/lib/mail-composer/index.js'
import type { FileRenderer, RenderInput } from '../../ports/fileRenderer.ts'

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

export function emlRenderer(options: { from: string; domain: string }): FileRenderer {
  return {
    async render(d: RenderInput) {
      const text: string[] = []
      const html: string[] = []
      for (const s of d.sections) {
        if (s.heading) (text.push(`${s.heading}:`), html.push(`<h3>${escape(s.heading)}</h3>`))
        for (const p of s.paragraphs) (text.push(p, ''), html.push(`<p>${escape(p)}</p>`))
        if (s.bullets.length > 0) {
          for (const b of s.bullets) text.push(`- ${b}`)
          text.push('')
          html.push(`<ul>${s.bullets.map((b) => `<li>${escape(b)}</li>`).join('')}</ul>`)
        }
      }
      const mail = new MailComposer({
        from: options.from,
        subject: d.subject ?? d.title,
        text: text.join('\n').trim() + '\n',
        html: `<!doctype html><html lang="${d.locale}"><body>${html.join('\n')}</body></html>`,
        date: new Date(d.createdAt),
        messageId: `<${d.id}@${options.domain}>`,
        headers: { 'X-Unsent': '1', 'Content-Language': d.locale },
      })
      return mail.compile().build()
    },
  }
}
