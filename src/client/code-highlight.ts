/**
 * A code block's line highlighted (markdown.ts): highlight.js's HTML (spans with hljs-<scope>
 * classes, escaped text) turned into ANSI, each scope drawn in a palette role.
 */
import { resetAttributes } from '../output/sanitize.ts';
import { decodeEntities } from './markdown-inline.ts';
import type { PaletteRole } from './theme.ts';

/** highlight.js scopes → palette roles. */
const scopeRoles: Record<string, PaletteRole | 'bold' | ''> = {
  keyword: 'keyword',
  built_in: 'name',
  type: 'name',
  literal: 'number',
  number: 'number',
  string: 'string',
  regexp: 'error',
  comment: 'muted',
  doc: 'muted',
  meta: 'muted',
  title: 'title',
  'title.function': 'title',
  'title.class': 'name',
  attr: 'name',
  attribute: 'name',
  property: 'name',
  variable: 'error',
  'template-variable': 'error',
  params: '',
  symbol: 'number',
  tag: 'title',
  name: 'title',
  addition: 'string',
  deletion: 'error',
  section: 'bold',
};

/** highlight.js HTML (spans with hljs-<scope> classes, escaped text) → ANSI, each scope's style from `styleOf`. */
export function htmlToAnsi(html: string, styleOf: (role: PaletteRole | 'bold' | '') => string): string {
  const stack: string[] = [];
  let output = '';
  const pattern = /<span class="([^"]*)">|<\/span>|([^<]+)/g;
  for (const match of html.matchAll(pattern)) {
    if (match[1] !== undefined) {
      const scope = match[1]
        .split(' ')[0]!
        .replace(/^hljs-/, '')
        .replace(/_$/, '');
      const role = scopeRoles[scope] ?? scopeRoles[scope.split('.')[0]!] ?? '';
      const style = styleOf(role);
      stack.push(style);
      output += style;
    } else if (match[0] === '</span>') {
      stack.pop();
      output += resetAttributes + stack.join('');
    } else {
      output += decodeEntities(match[2]!);
    }
  }
  return output + (stack.length > 0 ? resetAttributes : '');
}
