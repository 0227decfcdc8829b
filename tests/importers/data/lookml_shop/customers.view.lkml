view: customers {
  derived_table: {
    sql: SELECT id, name, country FROM shop.customers WHERE id > 0 ;;
  }

  dimension: id {
    primary_key: yes
    type: number
    sql: ${TABLE}.id ;;
  }

  dimension: country {
    sql: ${TABLE}.country ;;
  }

  dimension: name_initial {
    sql: SUBSTR(${TABLE}.name, 1, 1) ;;
  }

  measure: count {
    type: count
  }
}
