/**
 * Streamed pieces reach the host together, once per event-loop turn: a provider's burst of
 * one-token pieces becomes one delta per kind run, and a slow stream loses nothing (the turn ends
 * at once). `send()` delivers what waits right away; the engine calls it before it persists or says
 * anything, so every delta precedes what follows it.
 */
import type { TextKind } from './step-text.ts';

export class DeltaQueue {
  private readonly unsent: { kind: TextKind; text: string }[] = [];
  private scheduled = false;

  constructor(private readonly deliver: (piece: { kind: TextKind; text: string }) => void) {}

  push(kind: TextKind, text: string): void {
    const last = this.unsent[this.unsent.length - 1];
    if (last && last.kind === kind) last.text += text;
    else this.unsent.push({ kind, text });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.send();
    });
  }

  send(): void {
    if (this.unsent.length === 0) return;
    for (const piece of this.unsent.splice(0)) this.deliver(piece);
  }
}
