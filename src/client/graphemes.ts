/**
 * Text as a terminal draws it: grapheme clusters (a letter and its marks, an emoji sequence with
 * its joiners and modifiers), each drawn in one place. Widths in cells are string-width's.
 */
const segmenter = new Intl.Segmenter();

/** The grapheme clusters of `text`, in order (printable ASCII is one per character). */
export function graphemes(text: string): string[] {
  if (/^[\u0020-\u007e]*$/.test(text)) return [...text];
  return Array.from(segmenter.segment(text), (part) => part.segment);
}
