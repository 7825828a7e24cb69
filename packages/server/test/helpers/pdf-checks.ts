import type { ExecutionContext } from 'ava';
import type { SvcClient } from '@svc/client';
import { passwordPdf } from './pdf-fixtures.ts';

/**
 * The password round trip every engine must pass on the JSON route: the right password opens
 * the file, a wrong one is `pdf_password_incorrect`, none is `pdf_encrypted`.
 */
export async function checkPasswordRoundTrip(t: ExecutionContext, client: SvcClient): Promise<void> {
  const data_base64 = passwordPdf('s3cret', 'Behind the password').toString('base64');
  const opened = (await client.pdf.extract({ body: { data_base64, password: 's3cret' } })) as { pages: Array<{ text: string }> };
  t.is(opened.pages[0]!.text, 'Behind the password');
  const wrong = await t.throwsAsync(client.pdf.extract({ body: { data_base64, password: 'guess' } }));
  t.is((wrong as { code?: string }).code, 'pdf_password_incorrect');
  const missing = await t.throwsAsync(client.pdf.extract({ body: { data_base64 } }));
  t.is((missing as { code?: string }).code, 'pdf_encrypted');
}
