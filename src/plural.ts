/** A count with its noun in the right number: `counted(1, 'inquiry', 'inquiries')` is "1 inquiry". */
export function counted(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}
