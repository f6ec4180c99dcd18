import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { promptStyle } from '../../src/client/prompt-theme.ts';
import {
  darkColors,
  isLightColor,
  lightColors,
  palette,
  paletteRoles,
  relativeLuminance,
  type ThemeName,
  xterm256Rgb,
} from '../../src/client/theme.ts';

type Rgb = [number, number, number];

/** WCAG contrast ratio of two RGB colours (0..255 channels). */
function contrast(one: Rgb, other: Rgb): number {
  const luminance = ([red, green, blue]: Rgb): number => relativeLuminance(red / 255, green / 255, blue / 255);
  const [light, dark] = [luminance(one), luminance(other)].sort((a, b) => b - a) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** The backgrounds each theme is for: white for light; black and a dark gray (#303030) for dark. */
const backgrounds: Record<ThemeName, Rgb[]> = {
  light: [[255, 255, 255]],
  dark: [
    [0, 0, 0],
    [48, 48, 48],
  ],
};

/** Every colour an SGR sequence in `text` sets, as an xterm-256 index; fails on any other kind of colour. */
function colorsIn(text: string): number[] {
  const colors: number[] = [];
  for (const match of text.matchAll(/\u001b\[([\d;]*)m/g)) {
    const parts = match[1]!.split(';').map(Number);
    for (let index = 0; index < parts.length; index++) {
      const code = parts[index]!;
      if (code === 38 && parts[index + 1] === 5) {
        colors.push(parts[index + 2]!);
        index += 2;
        continue;
      }
      assert.ok(
        ![30, 31, 32, 33, 34, 35, 36, 37, 90, 91, 92, 93, 94, 95, 96, 97, 38, 2].includes(code),
        `a colour not of the palette (SGR ${code}) in ${JSON.stringify(text)}`,
      );
    }
  }
  return colors;
}

for (const [theme, colors] of [
  ['light', lightColors],
  ['dark', darkColors],
] as const) {
  describe(`the ${theme} palette`, () => {
    it(`every role has a contrast of at least 4.5:1 against its background, computed from its RGB`, () => {
      for (const role of paletteRoles) {
        const rgb = xterm256Rgb(colors[role]);
        for (const background of backgrounds[theme]) {
          const ratio = contrast(rgb, background);
          assert.ok(
            ratio >= 4.5,
            `${role}: colour ${colors[role]} (rgb ${rgb.join(',')}) has ${ratio.toFixed(2)}:1 on rgb ${background.join(',')}`,
          );
        }
      }
    });

    it("prompts draw only the palette's colours: the one-key prompt's parts and every style of the @inquirer theme", () => {
      const style = promptStyle(palette(theme, true), true);
      const { inquirer } = style;
      const drawn = [
        ...paletteRoles.map((role) => style.paint(role, 'text')),
        style.bold('text'),
        inquirer.prefix.idle,
        inquirer.prefix.done,
        ...inquirer.spinner.frames,
        ...Object.values(inquirer.icon),
        ...Object.entries(inquirer.style).map(([name, draw]) =>
          name === 'keysHelpTip'
            ? inquirer.style.keysHelpTip([
                ['↑↓', 'navigate'],
                ['⏎', 'select'],
              ])
            : (draw as (text: string) => string)('text'),
        ),
      ];
      const used = new Set(drawn.flatMap(colorsIn));
      assert.ok(used.size >= 4, `prompts are drawn in colour: ${[...used].join(', ')}`);
      const allowed = new Set(Object.values(colors));
      for (const color of used) assert.ok(allowed.has(color), `colour ${color} is not of the ${theme} palette`);
    });

    it('without colour, prompts draw no escape sequence at all', () => {
      const style = promptStyle(palette(theme, false), false);
      const drawn = [
        style.paint('error', 'x'),
        style.bold('x'),
        style.inquirer.prefix.done,
        style.inquirer.style.help('x'),
      ];
      for (const text of drawn) assert.doesNotMatch(text, /\u001b/);
    });
  });
}

describe('xterm-256 colours', () => {
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
