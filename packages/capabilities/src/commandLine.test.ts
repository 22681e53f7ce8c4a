import { describe, expect, it } from 'vitest';
import { formatArgument, formatCommandLine, quoteWord, scanCommandLine, splitCommandLine } from './commandLine.js';

describe('splitCommandLine', () => {
  it.each([
    ['git status', ['git', 'status']],
    ['  ls   -la\t/tmp  ', ['ls', '-la', '/tmp']],
    [`git commit -m "fix: a b"`, ['git', 'commit', '-m', 'fix: a b']],
    [`echo 'single $HOME | x'`, ['echo', 'single $HOME | x']],
    [`echo "say \\"hi\\""`, ['echo', 'say "hi"']],
    [`--name="a b"c`, ['--name=a bc']],
    [`echo "" ''`, ['echo', '', '']],
    [`dir C:\\Users\\me`, ['dir', 'C:\\Users\\me']],
    [`"C:\\Program Files\\node.exe" -v`, ['C:\\Program Files\\node.exe', '-v']],
    [`echo a\\ b \\"q`, ['echo', 'a b', '"q']],
    [`find . -name *.ts`, ['find', '.', '-name', '*.ts']],
    [`echo "a|b;c>d$e"`, ['echo', 'a|b;c>d$e']],
  ])('splits %s', (line, argv) => {
    expect(splitCommandLine(line)).toEqual(argv);
  });

  it.each(['ls | grep x', 'a && b', 'a; b', 'cat < f', 'echo > f', 'echo $HOME', 'echo `id`', 'echo $(id)', '(sub)'])(
    'refuses shell syntax outside quotes: %s',
    (line) => {
      expect(() => splitCommandLine(line)).toThrow(/shell syntax .*shell: true/);
    },
  );

  it('refuses unterminated quotes and empty lines', () => {
    expect(() => splitCommandLine(`echo "open`)).toThrow(/unterminated double quote/);
    expect(() => splitCommandLine(`echo 'open`)).toThrow(/unterminated single quote/);
    expect(() => splitCommandLine('   ')).toThrow(/empty/);
  });
});

describe('formatCommandLine', () => {
  it('quotes only arguments that need it', () => {
    expect(formatCommandLine(['git', 'commit', '-m', 'fix bug'])).toBe('git commit -m "fix bug"');
    expect(formatArgument('')).toBe('""');
    expect(formatArgument('say "hi"')).toBe('"say \\"hi\\""');
    expect(formatArgument('C:\\dir')).toBe('C:\\dir');
    expect(formatArgument('C:\\my dir')).toBe('"C:\\\\my dir"');
  });

  it('renders distinct argument lists differently', () => {
    const lists = [['a b'], ['a', 'b'], ['"a', 'b"'], ['a\\', 'b'], ['a\\ b'], ['', ''], [' '], ['x\\" y']];
    const rendered = lists.map(formatCommandLine);
    expect(new Set(rendered).size).toBe(lists.length);
  });

  it('round-trips through splitCommandLine for arguments without backslashes', () => {
    const argv = ['git', 'commit', '-m', 'say "hi" now', '', '--x=1'];
    expect(splitCommandLine(formatCommandLine(argv))).toEqual(argv);
  });
});

describe('scanCommandLine in pattern mode', () => {
  it('records unquoted stars as wildcards and reads \\* and quoted stars literally', () => {
    expect(scanCommandLine(`a * b* \\* '*' "x*"`, { pattern: true })).toEqual([
      { value: 'a', wildcards: [] },
      { value: '*', wildcards: [0] },
      { value: 'b*', wildcards: [1] },
      { value: '*', wildcards: [] },
      { value: '*', wildcards: [] },
      { value: 'x*', wildcards: [] },
    ]);
  });

  it('outside pattern mode a star is an ordinary character and \\* stays two characters', () => {
    expect(scanCommandLine('a * \\*')).toEqual([
      { value: 'a', wildcards: [] },
      { value: '*', wildcards: [] },
      { value: '\\*', wildcards: [] },
    ]);
  });
});

describe('quoteWord', () => {
  it('reads back unchanged through splitCommandLine, whatever the word holds', () => {
    const words = ['plain', '', 'a b', "it's", 'a\\', '\\"', '"q"', '$(id)', '`id`', 'a;b', '|', '*', '* x', '\t', 'C:\\Program Files\\x.exe', "'", "''"];
    for (const word of words) expect(splitCommandLine(`x ${quoteWord(word)}`), JSON.stringify(word)).toEqual(['x', word]);
    expect(quoteWord('--flag=1')).toBe('--flag=1');
    expect(quoteWord('*')).toBe("'*'");
  });
});
