import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasControlCharacters, visible } from '../../src/output/sanitize.ts';

describe('visible', () => {
  it('shows the escape sequences an attacker uses, so none reaches the terminal', () => {
    const osc52 = '\u001b]52;c;cm0gLXJmIH4=\u0007';
    const overwrite = 'ok\u001b[2A\u001b[2K$ FAKE PROMPT>';
    const conceal = 'bye\u001b[8m';
    assert.equal(visible(osc52), '^[]52;c;cm0gLXJmIH4=^G');
    assert.equal(visible(overwrite), 'ok^[[2A^[[2K$ FAKE PROMPT>');
    assert.equal(visible(conceal), 'bye^[[8m');
    assert.equal(visible('\u001bc\u001b[6n'), '^[c^[[6n');
    for (const text of [osc52, overwrite, conceal]) assert.doesNotMatch(visible(text), /\u001b/);
  });

  it('shows carriage returns, DEL, C1 controls and bidirectional overrides', () => {
    assert.equal(visible('safe\rrm -rf ~'), 'safe^Mrm -rf ~');
    assert.equal(visible('a\u007fb'), 'a^?b');
    assert.equal(visible('\u009b31m'), '\\x9b31m');
    assert.equal(visible('ls \u202eexe.txt'), 'ls <U+202E>exe.txt');
    assert.equal(visible('\u2066x\u2069'), '<U+2066>x<U+2069>');
  });

  it('keeps newlines and tabs unless one line is asked for, and returns clean text unchanged', () => {
    assert.equal(visible('a\n\tb'), 'a\n\tb');
    assert.equal(visible('a\n\tb', { singleLine: true }), 'a^J^Ib');
    assert.equal(visible('dos\r\nline\r\n'), 'dos\nline\n', 'a CR LF line ending is a newline');
    assert.equal(visible('over\rwrite\r\n'), 'over^Mwrite\n', 'a lone CR is shown');
    assert.equal(visible('a\r\nb', { singleLine: true }), 'a^M^Jb');
    const clean = 'héllo — wörld ✔ 日本';
    assert.equal(visible(clean), clean);
    assert.equal(hasControlCharacters(clean + '\n\t'), false);
    assert.equal(hasControlCharacters('x\u001b'), true);
  });

  it('with `invisible`, draws every invisible or format character as <U+…>; without, leaves text as it reads', () => {
    const text = 'a\u200Bb\u2060c\uFEFFd\u3164e\u00ADf\u200Eg\u{E0041}h\uFE0Fi\u034Fj';
    assert.equal(
      visible(text, { invisible: true }),
      'a<U+200B>b<U+2060>c<U+FEFF>d<U+3164>e<U+00AD>f<U+200E>g<U+E0041>h<U+FE0F>i<U+034F>j',
    );
    assert.equal(visible('rm \u202e-rf\u200B\n', { invisible: true, singleLine: true }), 'rm <U+202E>-rf<U+200B>^J');
    const family = '👩\u200D👩\u200D👧 ❤\uFE0F';
    assert.equal(visible(family), family, 'an answer keeps its emoji sequences');
    const clean = 'héllo — wörld ✔ 日本';
    assert.equal(visible(clean, { invisible: true }), clean);
  });
});
