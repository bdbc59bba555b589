/**
 * The document `--xpath` runs on: an HTTP body parsed as HTML (htmlparser2,
 * which takes what browsers take: unclosed `<li>` and `<p>`, void elements
 * such as `<br>`, attributes without quotes, entities) or as XML (sax in
 * strict mode, with namespaces), built into the few DOM nodes the `xpath`
 * library walks (docs/contract.md §5 http). Nodes carry their document
 * order, so sorting a node set costs one comparison per pair.
 *
 * The parsers are imported on first use only: loading this module costs
 * nothing to an http condition without `--xpath`.
 *
 * @module
 */

/** DOM node types the XPath data model has. */
const ELEMENT = 1;
const ATTRIBUTE = 2;
const TEXT = 3;
const PROCESSING_INSTRUCTION = 7;
const COMMENT = 8;
const DOCUMENT = 9;

/** compareDocumentPosition's bits. */
const PRECEDING = 2;
const FOLLOWING = 4;

/** A node of the tree, as the `xpath` library reads it (DOM Level 2 names). */
export class XNode {
  parentNode: XNode | null = null;
  firstChild: XNode | null = null;
  lastChild: XNode | null = null;
  nextSibling: XNode | null = null;
  previousSibling: XNode | null = null;
  readonly childNodes: XNode[] = [];
  /** Position in document order. */
  readonly order: number;

  constructor(
    readonly nodeType: number,
    readonly nodeName: string,
    readonly ownerDocument: XDocument | null,
    public nodeValue: string | null = null,
  ) {
    this.order = ownerDocument === null ? 0 : ownerDocument.nextOrder();
  }

  /** The name's local part (elements and attributes; null for other nodes, as in the DOM). */
  get localName(): string | null {
    return null;
  }

  /** The namespace URI (elements and attributes). */
  get namespaceURI(): string | null {
    return null;
  }

  /** The name's prefix (elements and attributes). */
  get prefix(): string | null {
    return null;
  }

  /** Where `other` stands: before this node or after it (the library sorts with it). */
  compareDocumentPosition(other: XNode): number {
    return other.order < this.order ? PRECEDING : FOLLOWING;
  }

  /** Adds `child` as the last child; text next to text is merged (XPath has no adjacent texts). */
  append(child: XNode): void {
    const last = this.lastChild;
    if (child.nodeType === TEXT && last !== null && last.nodeType === TEXT) {
      last.nodeValue += child.nodeValue ?? "";
      return;
    }
    child.parentNode = this;
    child.previousSibling = last;
    if (last === null) this.firstChild = child;
    else last.nextSibling = child;
    this.lastChild = child;
    this.childNodes.push(child);
  }
}

/** A qualified name: `prefix:local` or `local`, and its namespace. */
export interface QName {
  readonly name: string;
  readonly local: string;
  readonly prefix: string | null;
  readonly uri: string | null;
}

/** A node with a qualified name (an element or an attribute). */
abstract class XNamed extends XNode {
  constructor(type: number, doc: XDocument, readonly qname: QName, value: string | null = null) {
    super(type, qname.name, doc, value);
  }

  override get localName(): string {
    return this.qname.local;
  }

  override get namespaceURI(): string | null {
    return this.qname.uri;
  }

  override get prefix(): string | null {
    return this.qname.prefix;
  }
}

/** An attribute (its element is `ownerElement`, never `parentNode`, as in the DOM). */
export class XAttr extends XNamed {
  ownerElement: XElement | null = null;

  constructor(doc: XDocument, qname: QName, readonly value: string) {
    super(ATTRIBUTE, doc, qname, value);
  }

  /** The attribute's name, as the DOM's `Attr.name`. */
  get name(): string {
    return this.qname.name;
  }
}

/** An element's attributes, indexed and through `item(i)` as a DOM NamedNodeMap. */
export type XAttrList = XAttr[] & { item(index: number): XAttr | null };

/** An element. */
export class XElement extends XNamed {
  readonly attributes: XAttrList;
  /** The attributes' names: the first of a name wins without a scan of the list. */
  readonly #names = new Set<string>();

  constructor(doc: XDocument, qname: QName) {
    super(ELEMENT, doc, qname);
    const list: XAttr[] = [];
    this.attributes = Object.assign(list, { item: (i: number) => list[i] ?? null });
  }

  /** The element's name, as the DOM's `Element.tagName`. */
  get tagName(): string {
    return this.qname.name;
  }

  /** Adds an attribute; the first of a name wins, as in browsers. */
  addAttribute(attr: XAttr): void {
    if (this.#names.has(attr.name)) return;
    this.#names.add(attr.name);
    attr.ownerElement = this;
    this.attributes.push(attr);
  }

  /** The value of the attribute named `name`, or null. */
  getAttribute(name: string): string | null {
    return this.attributes.find((a) => a.name === name)?.value ?? null;
  }

  /** The value of the attribute `local` of namespace `ns`, or null. */
  getAttributeNS(ns: string | null, local: string): string | null {
    return this.attributes.find((a) => a.namespaceURI === ns && a.localName === local)?.value ??
      null;
  }
}

/** How the body was parsed. */
export type BodyFormat = "HTML" | "XML";

/** The document: the root of the tree. */
export class XDocument extends XNode {
  #count = 0;
  /** The first element of each `id`, for XPath's `id()`. */
  readonly #ids = new Map<string, XElement>();
  /** Namespace prefixes the document declares, the first declaration of each (XML only). */
  readonly prefixes = new Map<string, string>();
  /** The library asks whether the DOM is an HTML one; it is told by option instead. */
  readonly implementation = { hasFeature: () => false };

  constructor(readonly format: BodyFormat) {
    super(DOCUMENT, "#document", null);
  }

  /** The next position in document order. */
  nextOrder(): number {
    return ++this.#count;
  }

  /** The first element child. */
  get documentElement(): XElement | null {
    return (this.childNodes.find((n) => n.nodeType === ELEMENT) as XElement | undefined) ?? null;
  }

  /** The first element whose `id` attribute is `id`, or null. */
  getElementById(id: string): XElement | null {
    return this.#ids.get(id) ?? null;
  }

  /** Records `el`'s `id` attribute, if any, for `getElementById`. */
  noteId(el: XElement): void {
    const id = el.getAttribute("id");
    if (id !== null && !this.#ids.has(id)) this.#ids.set(id, el);
  }
}

// ------------------------------------------------------------------ HTML

/** An HTML name: no namespace and no prefix (`xlink:href` is one name, as the HTML parser reads it). */
function plain(name: string): QName {
  return { name, local: name, prefix: null, uri: null };
}

/**
 * `text` parsed as HTML the way browsers read it: element and attribute
 * names in lower case, implied end tags, void elements, entities decoded,
 * the doctype left out (XPath has no node for it).
 */
export async function parseHtml(text: string): Promise<XDocument> {
  const { Parser } = await import("htmlparser2");
  const doc = new XDocument("HTML");
  const stack: XNode[] = [doc];
  const top = () => stack[stack.length - 1]!;
  const parser = new Parser({
    onopentag(name, attribs) {
      const el = new XElement(doc, plain(name));
      for (const [k, v] of Object.entries(attribs)) el.addAttribute(new XAttr(doc, plain(k), v));
      doc.noteId(el);
      top().append(el);
      stack.push(el);
    },
    onclosetag() {
      // htmlparser2 reports every end, implied ones included, innermost first.
      if (stack.length > 1) stack.pop();
    },
    ontext(data) {
      top().append(new XNode(TEXT, "#text", doc, data));
    },
    oncomment(data) {
      top().append(new XNode(COMMENT, "#comment", doc, data));
    },
  }, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
  parser.write(text);
  parser.end();
  return doc;
}

// ------------------------------------------------------------------ XML

/** What sax gives for a name in its namespace mode. */
interface SaxQName {
  readonly name: string;
  readonly prefix: string;
  readonly local: string;
  readonly uri: string;
}

/** A start tag as sax gives it (strict, `xmlns: true`). */
interface SaxTag extends SaxQName {
  readonly attributes: Record<string, SaxQName & { readonly value: string }>;
}

/** The part of sax's parser used here. */
interface SaxParser {
  onopentag: (tag: SaxTag) => void;
  onclosetag: () => void;
  ontext: (text: string) => void;
  oncdata: (text: string) => void;
  oncomment: (text: string) => void;
  onprocessinginstruction: (pi: { name: string; body: string }) => void;
  onerror: (e: Error) => void;
  line: number;
  column: number;
  write(text: string): SaxParser;
  close(): SaxParser;
}

/** The part of the sax module used here. */
interface SaxModule {
  parser(strict: boolean, opt: { xmlns: boolean; position: boolean }): SaxParser;
}

/** A body that is not well-formed XML: sax's reason and where (1-based line and column). */
export class XmlSyntaxError extends Error {
  constructor(reason: string, readonly line: number, readonly column: number) {
    super(`${reason} (line ${line}, column ${column})`);
    this.name = "XmlSyntaxError";
  }
}

/** A sax name as the tree's: no prefix and no namespace are null. */
function qnameOf(n: SaxQName): QName {
  return { name: n.name, local: n.local, prefix: n.prefix || null, uri: n.uri || null };
}

/**
 * `text` parsed as XML (well-formed or refused with an `XmlSyntaxError`):
 * namespaces resolved; namespace declarations are not attributes (XPath's
 * data model) but their prefixes are kept for the expression's names.
 * Entities a DTD declares are never expanded.
 */
export async function parseXml(text: string): Promise<XDocument> {
  const mod = await import("sax");
  const sax = (mod.default ?? mod) as unknown as SaxModule;
  const doc = new XDocument("XML");
  const stack: XNode[] = [doc];
  const top = () => stack[stack.length - 1]!;
  const parser = sax.parser(true, { xmlns: true, position: true });
  let failure: XmlSyntaxError | undefined;
  parser.onerror = (e) => {
    // sax's message is its reason, then "\nLine: …\nColumn: …\nChar: …" (0-based).
    failure ??= new XmlSyntaxError(e.message.split("\n")[0]!, parser.line + 1, parser.column + 1);
    throw failure;
  };
  parser.onopentag = (tag) => {
    const el = new XElement(doc, qnameOf(tag));
    for (const a of Object.values(tag.attributes)) {
      if (a.name === "xmlns" || a.prefix === "xmlns") {
        const prefix = a.prefix === "xmlns" ? a.local : "";
        if (!doc.prefixes.has(prefix)) doc.prefixes.set(prefix, a.value);
        continue;
      }
      el.addAttribute(new XAttr(doc, qnameOf(a), a.value));
    }
    doc.noteId(el);
    top().append(el);
    stack.push(el);
  };
  parser.onclosetag = () => {
    if (stack.length > 1) stack.pop();
  };
  const onText = (data: string) => {
    // Outside the root element only white space is allowed (sax refuses the rest), and
    // XPath's document node has no text children.
    if (stack.length > 1) top().append(new XNode(TEXT, "#text", doc, data));
  };
  parser.ontext = onText;
  parser.oncdata = onText;
  parser.oncomment = (data) => top().append(new XNode(COMMENT, "#comment", doc, data));
  parser.onprocessinginstruction = (pi) => {
    // The XML declaration is not a processing instruction in XPath's data model.
    if (pi.name.toLowerCase() === "xml") return;
    top().append(new XNode(PROCESSING_INSTRUCTION, pi.name, doc, pi.body));
  };
  try {
    parser.write(text).close();
  } catch (e) {
    throw failure ?? e;
  }
  if (doc.documentElement === null) throw new XmlSyntaxError("no root element", 1, 1);
  return doc;
}

// ------------------------------------------------------------------ choosing

/** The media type of a Content-Type header value, in lower case, without parameters. */
function mediaType(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * The body as a document: HTML when the Content-Type says `text/html`, XML
 * when it says `…/xml` or `…+xml` (not well-formed: an `XmlSyntaxError`);
 * with any other type, XML when it is well-formed XML whose root is not
 * `html`, else HTML (docs/contract.md §5 http).
 */
export async function parseBody(text: string, contentType: string | undefined): Promise<XDocument> {
  const type = mediaType(contentType);
  if (type === "text/html") return await parseHtml(text);
  if (type.endsWith("/xml") || type.endsWith("+xml")) return await parseXml(text);
  try {
    const doc = await parseXml(text);
    if (doc.documentElement?.localName.toLowerCase() !== "html") return doc;
  } catch (e) {
    if (!(e instanceof XmlSyntaxError)) throw e;
  }
  return await parseHtml(text);
}
