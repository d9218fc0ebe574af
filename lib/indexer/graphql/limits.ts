/**
 * Bounds on what one GraphQL operation may cost. Depth is checked as a validation rule (fragments
 * followed, introspection fields skipped so GraphiQL's own deep introspection query passes). Cost
 * is checked before execution, once variables are known: it is the number of rows the operation
 * can return, i.e. the sum of the `limit` of every list field (its default when absent) plus one
 * per single-transaction lookup. Nested fields add nothing: items are fetched whole, no N+1.
 */
import {
  GraphQLError, GraphQLInt, Kind, getOperationAST, valueFromAST,
  type ASTVisitor, type DocumentNode, type FieldNode, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext,
} from 'graphql';

type FragmentLookup = (name: string) => FragmentDefinitionNode | null | undefined;

/**
 * Depth of a selection set: a field with sub-selections is one level deeper than its parent.
 * A fragment's depth does not depend on where it is spread, so each is computed once (`memo`):
 * fragments that each spread the next twice would otherwise cost 2^n walks, and a few hundred
 * bytes of query could hold the event loop for hours before any validation error is reported.
 */
export function selectionDepth(
  set: SelectionSetNode, fragment: FragmentLookup, memo: Map<string, number> = new Map(),
): number {
  let max = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      if (sel.name.value.startsWith('__')) continue;
      max = Math.max(max, 1 + (sel.selectionSet ? selectionDepth(sel.selectionSet, fragment, memo) : 0));
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      max = Math.max(max, selectionDepth(sel.selectionSet, fragment, memo));
    } else {
      max = Math.max(max, fragmentValue(sel.name.value, memo, (name) => {
        const def = fragment(name);
        return def ? selectionDepth(def.selectionSet, fragment, memo) : 0;
      }));
    }
  }
  return max;
}

/**
 * The value of a named fragment, computed once per operation. A fragment met again while its own
 * value is being computed (a cycle, which the spec's NoFragmentCycles rule reports) counts 0.
 */
function fragmentValue(name: string, memo: Map<string, number>, compute: (name: string) => number): number {
  const known = memo.get(name);
  if (known !== undefined) return known;
  memo.set(name, 0);
  const value = compute(name);
  memo.set(name, value);
  return value;
}

export function depthLimitRule(maxDepth: number): (context: ValidationContext) => ASTVisitor {
  return (context) => ({
    OperationDefinition(node) {
      const depth = selectionDepth(node.selectionSet, (name) => context.getFragment(name));
      if (depth > maxDepth) {
        context.reportError(new GraphQLError(`Query depth ${depth} exceeds the maximum of ${maxDepth}`, {
          nodes: [node], extensions: { code: 'QUERY_TOO_DEEP', depth, maxDepth },
        }));
      }
    },
  });
}

export interface CostSettings {
  /** Root fields that return a list and take `limit`. */
  listFields: ReadonlySet<string>;
  defaultLimit: number;
  maxLimit: number;
}

/**
 * Rows an operation may return. `variables` are the coerced variable values. An invalid or
 * out-of-range limit counts as `maxLimit` here; argument validation rejects it anyway.
 */
export function operationCost(
  document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>, settings: CostSettings,
): number {
  return sumOverFields(document, operationName, (field) => {
    if (settings.listFields.has(field.name.value)) {
      const arg = field.arguments?.find((a) => a.name.value === 'limit');
      const value = arg ? valueFromAST(arg.value, GraphQLInt, variables) : undefined;
      const limit = value === undefined || value === null ? settings.defaultLimit : Number(value);
      return Number.isInteger(limit) && limit >= 1 && limit <= settings.maxLimit ? limit : settings.maxLimit;
    }
    return field.name.value.startsWith('__') ? 0 : 1;
  });
}

/**
 * How many fields of an operation each run a database query when resolved (`queryFields`: the
 * lists and the lookups), aliases and fragment spreads each counted. The cost bounds the rows;
 * this bounds the queries: a thousand aliased lookups cost a thousand "rows" but queue a thousand
 * queries on the pool at once, and every other client of the API waits behind them.
 */
export function operationQueries(
  document: DocumentNode, operationName: string | null | undefined, queryFields: ReadonlySet<string>,
): number {
  return sumOverFields(document, operationName, (field) => (queryFields.has(field.name.value) ? 1 : 0));
}

/**
 * The sum of `valueOf` over the fields an operation selects at its top level (the root fields,
 * through inline fragments and fragment spreads), each spread counted every time it appears but
 * each fragment walked once (its sum memoised, as in selectionDepth): a fragment spreading the
 * next twice, sixty deep, is sixty walks, not 2^60. Fields below a root field are not visited.
 */
function sumOverFields(document: DocumentNode, operationName: string | null | undefined, valueOf: (field: FieldNode) => number): number {
  const op = getOperationAST(document, operationName);
  if (!op) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  const memo = new Map<string, number>();
  const sumOf = (set: SelectionSetNode): number => {
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.INLINE_FRAGMENT) total += sumOf(sel.selectionSet);
      else if (sel.kind === Kind.FRAGMENT_SPREAD) {
        total += fragmentValue(sel.name.value, memo, (name) => {
          const def = fragments.get(name);
          return def ? sumOf(def.selectionSet) : 0;
        });
      } else total += valueOf(sel);
    }
    return total;
  };
  return sumOf(op.selectionSet);
}
