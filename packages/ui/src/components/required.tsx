/** Marks a field the form cannot be sent without, in words (a screen reader reads them) and not by colour alone. */
export function Required() {
  return <span class="required">(required)</span>;
}
