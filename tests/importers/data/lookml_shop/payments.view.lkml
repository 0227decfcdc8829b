view: payments {
  sql_table_name: shop.payments ;;

  dimension: id {
    primary_key: yes
    type: number
  }

  dimension: order_id {
    type: number
    sql: ${TABLE}.order_id ;;
  }

  dimension: method {
    sql: ${TABLE}.method ;;
  }

  measure: total_paid {
    type: sum
    sql: ${TABLE}.paid ;;
  }

  measure: card_payments {
    type: count_distinct
    sql: ${order_id} ;;
    filters: [method: "card,voucher"]
  }
}
