/**
 * The GraphQL front end's records over the core store: the object types root fields list (and the
 * sidecar names), seeded with deterministic records (values from the field types and names, ids
 * from a PRNG per seed and type), related records linked by their object-typed fields.
 */
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { seedRandom } from '../core/store.ts';
import { clone, hashString } from '../core/values.ts';
import { fill as fillTemplate } from '../rules.ts';
import { seedCount, seedOf, type Sidecar } from '../sidecar.ts';
import { BASE_TIME, connectionNode, DAY, isDateScalar, listNode, mintId, uuid } from './schema-types.ts';
import type { GraphqlResource, Rec } from './types.ts';

/**
 * The object types root fields list (`issues: IssueConnection`, `boards: [Board]`), those root
 * fields return one of (`viewer: User`) and those listed by their fields (`User.repositories`),
 * and those the sidecar names.
 */
export function graphqlResources(schema: GraphQLSchema, sidecar: Sidecar, queryType: GraphQLObjectType): Map<string, GraphqlResource> {
  const resources = new Map<string, GraphqlResource>();
  const add = (node: GraphQLObjectType | undefined): void => {
    if (node !== undefined && node.getFields()['id'] !== undefined && !resources.has(node.name))
      resources.set(node.name, { type: node, records: new Map(), created: 0 });
  };
  for (const f of Object.values(queryType.getFields())) add(connectionNode(f.type) ?? listNode(f.type));
  // A root field returning one object (`viewer`, `repository(owner, name)`): its type, and the types its fields list.
  for (const f of Object.values(queryType.getFields())) {
    const one = getNullableType(f.type);
    if (!isObjectType(one) || connectionNode(one) !== undefined || one.getFields()['id'] === undefined) continue;
    add(one);
    for (const sub of Object.values(one.getFields())) add(connectionNode(sub.type) ?? listNode(sub.type));
  }
  // A type the sidecar names under resources is one too, though no root field lists it (records code adds, listed by graphql.lists).
  for (const name of Object.keys(sidecar.resources ?? {})) {
    const type = schema.getType(name);
    if (!isObjectType(type) || type.getFields()['id'] === undefined)
      throw new Error(`invalid simulator sidecar for this schema: resources.${name} names no object type with an id`);
    if (!resources.has(name)) resources.set(name, { type, records: new Map(), created: 0 });
  }
  return resources;
}

export interface GraphqlStore {
  /** A value for a scalar or enum field of record number i. */
  scalarValue(typeName: string, field: string, i: number, rand: () => number, enumValues?: string[]): unknown;
  /** A fresh record of a type: non-null scalars and enums sampled, nullable ones null, lists empty. */
  sampleRecord(type: GraphQLObjectType, i: number, rand: () => number): Rec;
  /** A type's fields that name one record of another resource (not those looking one up by a required argument). */
  refFields(type: GraphQLObjectType): GraphQLField<unknown, unknown>[];
  syncIdField(r: GraphqlResource, rec: Rec, field: string): void;
  /** Seed every resource (each table's Map is kept, cleared and refilled), then relate their records. */
  reseed(): void;
}

export function graphqlStore(sidecar: Sidecar, seed: number, resources: Map<string, GraphqlResource>): GraphqlStore {
  /** A value for a scalar or enum field of record number i. */
  const scalarValue = (typeName: string, field: string, i: number, rand: () => number, enumValues?: string[]): unknown => {
    if (enumValues !== undefined) return enumValues[0] ?? null;
    switch (typeName) {
      case 'ID':
        return uuid(rand);
      case 'Int':
        return i + 1;
      case 'Float':
        return i + 1;
      case 'Boolean':
        return false;
      case 'String':
        if (/email/i.test(field)) return `user${i + 1}@example.com`;
        if (/url$/i.test(field)) return `https://example.com/${field}/${i + 1}`;
        return `${field} ${i + 1}`;
      default:
        if (/timeless/i.test(typeName)) return new Date(BASE_TIME + i * DAY).toISOString().slice(0, 10);
        if (isDateScalar(typeName)) return new Date(BASE_TIME + i * DAY + (hashString(field) % 24) * 3_600_000).toISOString();
        if (/json/i.test(typeName)) return {};
        return `${field} ${i + 1}`;
    }
  };
  /** A fresh record of a type: non-null scalars and enums sampled, nullable ones null, lists empty. */
  const sampleRecord = (type: GraphQLObjectType, i: number, rand: () => number): Rec => {
    const r: Rec = {};
    for (const f of Object.values(type.getFields())) {
      const named = getNamedType(f.type);
      if (connectionNode(f.type) !== undefined) continue;
      if (isListType(getNullableType(f.type))) {
        r[f.name] = isNonNullType(f.type) ? [] : null;
        continue;
      }
      if (f.name === 'id' && named.name === 'ID') r[f.name] = mintId(sidecar.graphql?.id_template, type.name, rand);
      else if (isScalarType(named) || isEnumType(named)) {
        r[f.name] =
          isNonNullType(f.type) || f.name === 'id'
            ? scalarValue(named.name, f.name, i, rand, isEnumType(named) ? named.getValues().map((v) => v.name) : undefined)
            : null;
      }
    }
    return r;
  };
  const refFields = (type: GraphQLObjectType): GraphQLField<unknown, unknown>[] =>
    Object.values(type.getFields()).filter((f) => {
      const n = getNamedType(f.type);
      // A field that takes a required argument (`issue(number: Int!)`) looks a record up; it holds none.
      const lookup = f.args.some((a) => isNonNullType(a.type) && a.defaultValue === undefined);
      return isObjectType(n) && !isListType(getNullableType(f.type)) && resources.has(n.name) && !lookup;
    });
  /** A type whose records the sidecar declares (resources.<Type>.template or a seed list): they hold what it says, nothing sampled. */
  const declaredRecords = (r: GraphqlResource): boolean =>
    sidecar.resources?.[r.type.name]?.template !== undefined || Array.isArray(sidecar.resources?.[r.type.name]?.seed);
  const seedRecords = (r: GraphqlResource): void => {
    const rs = sidecar.resources?.[r.type.name];
    const rand = seedRandom(seed, r.type.name);
    for (let i = 0; i < seedCount(sidecar, r.type.name); i++) {
      let rec: Rec;
      if (declaredRecords(r)) {
        const vars = { n: i + 1, seed, pools: sidecar.pools ?? {} };
        rec = clone({ ...((fillTemplate(rs?.template ?? {}, vars) ?? {}) as Rec), ...((fillTemplate(seedOf(rs, i) ?? {}, vars) ?? {}) as Rec) });
        rec['id'] ??= mintId(sidecar.graphql?.id_template, r.type.name, rand);
      } else {
        rec = sampleRecord(r.type, i, rand);
        for (const k of ['name', 'title']) if (typeof rec[k] === 'string') rec[k] = `${r.type.name} ${k} ${i + 1}`;
      }
      r.records.set(String(rec['id']), rec);
    }
  };
  /** A scalar `<field>Id` beside an object-typed field (Comment.issueId beside Comment.issue) holds the related record's id. */
  const syncIdField = (r: GraphqlResource, rec: Rec, field: string): void => {
    const idField = r.type.getFields()[`${field}Id`];
    if (idField === undefined || !isScalarType(getNamedType(idField.type))) return;
    const v = rec[field];
    rec[`${field}Id`] = v !== null && typeof v === 'object' && typeof (v as Rec)['__ref'] === 'string' ? (v as Rec)['__ref'] : null;
  };
  // Related records: each object-typed field names a seeded record of its type.
  const relate = (r: GraphqlResource): void => {
    if (declaredRecords(r)) return;
    const rand = seedRandom(seed, r.type.name, 0x5eed);
    for (const rec of r.records.values()) {
      for (const f of refFields(r.type)) {
        const target = [...(resources.get(getNamedType(f.type).name)?.records.keys() ?? [])];
        rec[f.name] = target.length === 0 ? null : { __ref: target[Math.floor(rand() * target.length)] };
        syncIdField(r, rec, f.name);
      }
    }
  };
  const reseed = (): void => {
    for (const r of resources.values()) {
      r.records.clear();
      r.created = 0;
      seedRecords(r);
    }
    for (const r of resources.values()) relate(r);
  };
  return { scalarValue, sampleRecord, refFields, syncIdField, reseed };
}
