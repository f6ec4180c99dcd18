import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLightColor, lightColors, paletteRoles, relativeLuminance, xterm256Rgb } from '../../../src/client/theme.ts';

/** WCAG contrast ratio of an RGB colour (0..255 channels) against white. */
function contrastAgainstWhite([red, green, blue]: [number, number, number]): number {
  const luminance = relativeLuminance(red / 255, green / 255, blue / 255);
  return (1 + 0.05) / (luminance + 0.05);
}

describe('the light palette', () => {
  it('every role has a contrast of at least 4.5:1 against white, computed from its RGB', () => {
    for (const role of paletteRoles) {
      const rgb = xterm256Rgb(lightColors[role]);
      const ratio = contrastAgainstWhite(rgb);
      assert.ok(ratio >= 4.5, `${role}: colour ${lightColors[role]} (rgb ${rgb.join(',')}) has ${ratio.toFixed(2)}:1`);
    }
  });

  it('xterm-256 colours follow the standard table', () => {
    assert.deepEqual(xterm256Rgb(94), [135, 95, 0]);
    assert.deepEqual(xterm256Rgb(24), [0, 95, 135]);
    assert.deepEqual(xterm256Rgb(242), [108, 108, 108]);
    assert.deepEqual(xterm256Rgb(231), [255, 255, 255]);
  });
});

describe('background answers (OSC 11)', () => {
  it('tells light from dark in the forms terminals answer with', () => {
    assert.equal(isLightColor('rgb:ffff/ffff/ffff'), true);
    assert.equal(isLightColor('rgb:fdfd/f6f6/e3e3'), true);
    assert.equal(isLightColor('rgb:0000/0000/0000'), false);
    assert.equal(isLightColor('rgb:1e/1e/2e'), false);
    assert.equal(isLightColor('#ffffff'), true);
    assert.equal(isLightColor('nonsense'), undefined);
  });
});
