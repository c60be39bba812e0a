/** The customer_name aliases' schema properties (a leaf module: the OpenAPI document reads it without loading the store). */

/** Schema properties of the aliases (documented; folded into customer_name before validation). */
export function customerAliasProperties(nameSchema: Record<string, unknown>): Record<string, Record<string, unknown>> {
  return {
    workspace_name: { ...nameSchema, description: "Airbyte's name for customer_name (an alias: send one of them, or equal values)" },
    external_user_id: { ...nameSchema, description: 'Older alias of customer_name' },
  };
}
