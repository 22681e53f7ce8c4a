import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository root (this file lives in `tests/support/`). */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** One public entry of a workspace package: a subpath of its `exports` other than `./internal/*` and `./package.json`. */
export interface PublicEntry {
  /** The package name, e.g. `@capnode/protocol`. */
  readonly packageName: string;
  /** The package directory relative to the repository root, e.g. `packages/protocol`. */
  readonly packageDir: string;
  /** The subpath as written in `exports`: `.`, `./node`, `./clients`. */
  readonly subpath: string;
  /** The snapshot's base name: `index` for `.`, else the subpath without `./` (`node`, `clients`). */
  readonly name: string;
  /** The absolute path of the entry's source (`@capnode/source` condition). */
  readonly sourceFile: string;
}

/** One exported name of an entry and its declaration text (several blocks when a name is both a value and a type). */
export interface ExportedName {
  readonly name: string;
  /** True when the name exists at runtime (a function, class, const, enum or namespace), false for type-only names. */
  readonly isValue: boolean;
  readonly text: string;
}

/** Every public entry of every workspace package and app, in a stable order. */
export function publicEntries(root = REPO_ROOT): PublicEntry[] {
  const entries: PublicEntry[] = [];
  for (const group of ['packages', 'apps']) {
    for (const dir of readdirSync(join(root, group)).sort()) {
      const manifestPath = join(root, group, dir, 'package.json');
      if (!existsSync(manifestPath)) continue;
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { name: string; exports?: Record<string, unknown> };
      for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
        if (subpath.includes('*') || subpath === './package.json' || typeof target !== 'object' || target === null) continue;
        const source = (target as Record<string, unknown>)['@capnode/source'];
        if (typeof source !== 'string') continue;
        entries.push({
          packageName: manifest.name,
          packageDir: `${group}/${dir}`,
          subpath,
          name: subpath === '.' ? 'index' : subpath.slice(2).replaceAll('/', '-'),
          sourceFile: join(root, group, dir, source),
        });
      }
    }
  }
  return entries;
}

/** Where an entry's committed surface snapshot lives. */
export function snapshotPath(entry: PublicEntry, root = REPO_ROOT): string {
  return join(root, entry.packageDir, 'api', `${entry.name}.api.txt`);
}

const TYPE_FLAGS =
  ts.NodeBuilderFlags.NoTruncation |
  ts.NodeBuilderFlags.MultilineObjectLiterals |
  ts.NodeBuilderFlags.IgnoreErrors |
  ts.NodeBuilderFlags.UseAliasDefinedOutsideCurrentScope |
  ts.NodeBuilderFlags.WriteTypeParametersInQualifiedName;

/** `import("./some/file.js").Name` → `Name`: file layout is not part of the surface. */
function stripImportQualifiers(text: string): string {
  return text.replace(/import\(\s*(["'])[^"']*\1\s*\)\./g, '');
}

/** Marks every tuple type under `node` to print on one line (the printer spreads them over lines otherwise). */
function singleLineTuples(node: ts.Node): void {
  if (ts.isTupleTypeNode(node)) ts.setEmitFlags(node, ts.EmitFlags.SingleLine);
  ts.forEachChild(node, singleLineTuples);
}

/** Sorts the members of every union in a type node built by the checker (its order follows type ids, which change with unrelated code). */
function sortUnions(node: ts.TypeNode, print: (node: ts.Node) => string): ts.TypeNode {
  const [result] = ts.transform(node, [
    (context) => {
      const visit = (child: ts.Node): ts.Node => {
        const visited = ts.visitEachChild(child, visit, context);
        if (!ts.isUnionTypeNode(visited)) return visited;
        const sorted = [...visited.types].sort((a, b) => compareText(print(a), print(b)));
        return context.factory.updateUnionTypeNode(visited, context.factory.createNodeArray(sorted));
      };
      return (root) => visit(root) as ts.TypeNode;
    },
  ]).transformed;
  return result ?? node;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Indents every line after the first by two spaces (a member's multi-line type inside its interface). */
function indentTail(text: string): string {
  return text.replace(/\n/g, '\n  ');
}

/**
 * Prints declarations of exported symbols the way a `.d.ts` shows them, without bodies or comments:
 * written types as written (reprinted), inferred types as the checker infers them (unions sorted).
 */
class DeclarationPrinter {
  private readonly printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

  constructor(private readonly checker: ts.TypeChecker) {}

  private print(node: ts.Node, file?: ts.SourceFile): string {
    singleLineTuples(node);
    return stripImportQualifiers(this.printer.printNode(ts.EmitHint.Unspecified, node, file ?? node.getSourceFile()));
  }

  /** The type as written at `written`, or else the checker's `inferred()` type seen from `enclosing`. */
  private typeText(written: ts.TypeNode | undefined, inferred: () => ts.Type, enclosing: ts.Node): string {
    if (written) return this.print(written);
    const type = inferred();
    const file = enclosing.getSourceFile();
    const node = this.checker.typeToTypeNode(type, enclosing, TYPE_FLAGS);
    if (!node) return this.checker.typeToString(type, enclosing, ts.TypeFormatFlags.NoTruncation);
    return this.print(sortUnions(node, (child) => this.printer.printNode(ts.EmitHint.Unspecified, child, file)), file);
  }

  /** `<T>(a: A, b?: B): R` of a function, method, constructor or call signature. */
  private signatureText(declaration: ts.SignatureDeclaration): string {
    const parameters = declaration.parameters.map((parameter) => {
      const rest = parameter.dotDotDotToken ? '...' : '';
      const optional = parameter.questionToken || parameter.initializer ? '?' : '';
      const type = this.typeText(parameter.type, () => this.checker.getTypeAtLocation(parameter), parameter);
      return `${rest}${this.print(parameter.name)}${optional}: ${type}`;
    });
    const open = ts.isIndexSignatureDeclaration(declaration) ? '[' : '(';
    const close = ts.isIndexSignatureDeclaration(declaration) ? ']' : ')';
    const head = `${this.typeParameters(declaration)}${open}${parameters.join(', ')}${close}`;
    if (ts.isConstructorDeclaration(declaration)) return head;
    const returnType = this.typeText(declaration.type, () => this.checker.getReturnTypeOfSignature(this.checker.getSignatureFromDeclaration(declaration)!), declaration);
    return `${head}: ${returnType}`;
  }

  /** The declaration blocks of one exported symbol, `name` being the exported name (it may differ from the local one). */
  declarations(name: string, symbol: ts.Symbol): string[] {
    const declarations = symbol.declarations ?? [];
    const external = declarations.find((declaration) => declaration.getSourceFile().fileName.includes(`${sep}node_modules${sep}`) || declaration.getSourceFile().isDeclarationFile);
    if (external) return [`${kindOf(external)} ${name} (from ${moduleNameOf(external.getSourceFile().fileName)})`];
    const functions = declarations.filter(ts.isFunctionDeclaration);
    // With overloads, the implementation signature is not part of the surface.
    const signatures = functions.length > 1 ? functions.filter((declaration) => !declaration.body) : functions;
    return [
      ...signatures.map((declaration) => `function ${name}${this.signatureText(declaration)}`),
      ...declarations.filter((declaration) => !ts.isFunctionDeclaration(declaration)).map((declaration) => this.declaration(name, symbol, declaration)),
    ];
  }

  private declaration(name: string, symbol: ts.Symbol, declaration: ts.Declaration): string {
    if (ts.isInterfaceDeclaration(declaration)) return this.interfaceText(name, declaration);
    if (ts.isClassDeclaration(declaration)) return this.classText(name, declaration);
    if (ts.isTypeAliasDeclaration(declaration)) return `type ${name}${this.typeParameters(declaration)} = ${this.print(declaration.type)}`;
    if (ts.isVariableDeclaration(declaration)) {
      const keyword = declaration.parent.flags & ts.NodeFlags.Const ? 'const' : 'let';
      return `${keyword} ${name}: ${this.typeText(declaration.type, () => this.checker.getTypeOfSymbolAtLocation(symbol, declaration), declaration)}`;
    }
    if (ts.isEnumDeclaration(declaration)) {
      const members = declaration.members.map((member) => `  ${member.name.getText()} = ${JSON.stringify(this.checker.getConstantValue(member))}`);
      return `enum ${name} {\n${members.join(',\n')}\n}`;
    }
    if (ts.isModuleDeclaration(declaration)) return `namespace ${name}`;
    return `${ts.SyntaxKind[declaration.kind]} ${name}`;
  }

  private typeParameters(declaration: ts.DeclarationWithTypeParameterChildren): string {
    const parameters = declaration.typeParameters;
    if (!parameters?.length) return '';
    return `<${parameters.map((parameter) => this.print(parameter)).join(', ')}>`;
  }

  private heritage(declaration: ts.ClassDeclaration | ts.InterfaceDeclaration): string {
    return (declaration.heritageClauses ?? [])
      .map((clause) => {
        const keyword = clause.token === ts.SyntaxKind.ExtendsKeyword ? 'extends' : 'implements';
        return ` ${keyword} ${clause.types.map((type) => this.print(type)).join(', ')}`;
      })
      .join('');
  }

  private body(members: readonly (ts.TypeElement | ts.ClassElement)[]): string {
    return members.length ? `{\n${members.map((member) => `  ${indentTail(this.memberText(member))};\n`).join('')}}` : '{}';
  }

  private interfaceText(name: string, declaration: ts.InterfaceDeclaration): string {
    return `interface ${name}${this.typeParameters(declaration)}${this.heritage(declaration)} ${this.body(declaration.members)}`;
  }

  private classText(name: string, declaration: ts.ClassDeclaration): string {
    const abstract = ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Abstract ? 'abstract ' : '';
    const members = declaration.members.filter((member) => !isPrivateMember(member) && !isOverloadImplementation(member, declaration.members));
    return `${abstract}class ${name}${this.typeParameters(declaration)}${this.heritage(declaration)} ${this.body(members)}`;
  }

  /** One member of an interface or class: its modifiers, name and declared type. */
  private memberText(member: ts.TypeElement | ts.ClassElement): string {
    const modifiers = ts.canHaveModifiers(member)
      ? (ts.getModifiers(member) ?? [])
          .filter((modifier) => [ts.SyntaxKind.StaticKeyword, ts.SyntaxKind.ReadonlyKeyword, ts.SyntaxKind.ProtectedKeyword, ts.SyntaxKind.AbstractKeyword].includes(modifier.kind))
          .map((modifier) => `${modifier.getText()} `)
          .join('')
      : '';
    const memberName = member.name ? this.print(member.name) : '';
    const optional = (member as { questionToken?: ts.QuestionToken }).questionToken ? '?' : '';
    if (ts.isConstructorDeclaration(member)) return `constructor${this.signatureText(member)}`;
    if (ts.isGetAccessorDeclaration(member)) return `${modifiers}get ${memberName}(): ${this.typeText(member.type, () => this.checker.getReturnTypeOfSignature(this.checker.getSignatureFromDeclaration(member)!), member)}`;
    if (ts.isSetAccessorDeclaration(member)) return `${modifiers}set ${memberName}${this.signatureText(member).replace(/: void$/, '')}`;
    if (ts.isConstructSignatureDeclaration(member)) return `new ${this.signatureText(member)}`;
    if (ts.isFunctionLike(member)) return `${modifiers}${memberName}${optional}${this.signatureText(member)}`;
    if (ts.isPropertySignature(member) || ts.isPropertyDeclaration(member)) {
      return `${modifiers}${memberName}${optional}: ${this.typeText(member.type, () => this.checker.getTypeAtLocation(member), member)}`;
    }
    return this.print(member);
  }
}

/** A method or constructor body that has overload signatures: only the overloads are part of the surface. */
function isOverloadImplementation(member: ts.ClassElement, members: readonly ts.ClassElement[]): boolean {
  if (!(ts.isMethodDeclaration(member) || ts.isConstructorDeclaration(member)) || !member.body) return false;
  const key = ts.isConstructorDeclaration(member) ? 'constructor' : member.name.getText();
  return members.some((other) => other !== member && (ts.isMethodDeclaration(other) || ts.isConstructorDeclaration(other)) && !other.body && (ts.isConstructorDeclaration(other) ? 'constructor' : other.name.getText()) === key);
}

function isPrivateMember(member: ts.ClassElement): boolean {
  if (member.name && ts.isPrivateIdentifier(member.name)) return true;
  if (ts.isClassStaticBlockDeclaration(member) || ts.isSemicolonClassElement(member)) return true;
  return ts.canHaveModifiers(member) && (ts.getModifiers(member) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.PrivateKeyword);
}

function kindOf(declaration: ts.Declaration): string {
  if (ts.isFunctionDeclaration(declaration)) return 'function';
  if (ts.isClassDeclaration(declaration)) return 'class';
  if (ts.isInterfaceDeclaration(declaration)) return 'interface';
  if (ts.isTypeAliasDeclaration(declaration)) return 'type';
  if (ts.isVariableDeclaration(declaration)) return 'const';
  if (ts.isModuleDeclaration(declaration) || ts.isSourceFile(declaration)) return 'namespace';
  if (ts.isEnumDeclaration(declaration)) return 'enum';
  return 'export';
}

/** `…/node_modules/zod/v4/classic/external.d.cts` → `zod`; `…/node_modules/@types/node/…` → `@types/node`. */
function moduleNameOf(fileName: string): string {
  const normalized = fileName.split(sep).join('/');
  const match = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(normalized);
  return match?.[1] ?? 'lib';
}

/** The compiler options of the repository (`tsconfig.base.json`), for type-checking every entry in one program. */
function compilerOptions(root: string): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.base.json');
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, root).options;
}

/** The resolved symbol behind an export (following `export { x } from`, `export *` and import aliases). */
function resolveAlias(checker: ts.TypeChecker, symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/** Whether the exported name has a runtime value (type-only re-exports of values have none). */
function isValueExport(exported: ts.Symbol, resolved: ts.Symbol): boolean {
  if (!(resolved.flags & ts.SymbolFlags.Value)) return false;
  if (exported.flags & ts.SymbolFlags.Alias) {
    if (exported.declarations?.some((declaration) => ts.isTypeOnlyImportOrExportDeclaration(declaration))) return false;
  }
  return true;
}

/** The exported names of every entry, with declaration texts, type-checked in one program. */
export function readSurfaces(entries: readonly PublicEntry[], root = REPO_ROOT): Map<PublicEntry, ExportedName[]> {
  const program = ts.createProgram({ rootNames: entries.map((entry) => entry.sourceFile), options: compilerOptions(root) });
  const checker = program.getTypeChecker();
  const printer = new DeclarationPrinter(checker);
  const surfaces = new Map<PublicEntry, ExportedName[]>();
  for (const entry of entries) {
    const sourceFile = program.getSourceFile(entry.sourceFile);
    if (!sourceFile) throw new Error(`${relative(root, entry.sourceFile)} is not in the program`);
    const moduleSymbol = checker.getSymbolAtLocation(sourceFile);
    const exports = moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : [];
    const names = exports.map((exported) => {
      const resolved = resolveAlias(checker, exported);
      const name = exported.getName();
      return { name, isValue: isValueExport(exported, resolved), text: printer.declarations(name, resolved).join('\n') };
    });
    surfaces.set(entry, names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
  }
  return surfaces;
}

/** The snapshot text of one entry: a header, then one block per exported name, sorted. */
export function formatSurface(entry: PublicEntry, names: readonly ExportedName[]): string {
  const header = [
    `# ${entry.packageName}${entry.subpath === '.' ? '' : entry.subpath.slice(1)}`,
    `# The public surface of ${entry.packageDir}/${relative(join(REPO_ROOT, entry.packageDir), entry.sourceFile).split(sep).join('/')}; ${names.length} names.`,
    '# Generated by tests/surface/surface.test.ts; update with `pnpm surface:update`.',
  ];
  const blocks = names.map(({ name, isValue, text }) => `## ${name}${isValue ? '' : ' (type)'}\n${text}`);
  return `${header.join('\n')}\n\n${blocks.join('\n\n')}\n`;
}
