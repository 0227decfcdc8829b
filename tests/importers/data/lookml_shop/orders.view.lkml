view: base_orders {
  extension: required
  sql_table_name: shop.orders ;;

  dimension: id {
    primary_key: yes
    type: number
    sql: ${TABLE}.id ;;
  }

  dimension: customer_id {
    type: number
    hidden: yes
    sql: ${TABLE}.customer_id ;;
  }

  measure: count {
    type: count
  }
}

view: orders {
  extends: [base_orders]

  dimension: status {
    sql: ${TABLE}.status ;;
  }

  dimension: amount {
    type: number
    sql: ${TABLE}.amount ;;
  }

  dimension: amount_tier {
    type: tier
    tiers: [20, 100]
    style: integer
    sql: ${amount} ;;
  }

  dimension: is_big {
    type: yesno
    sql: ${amount} > 100 ;;
  }

  dimension_group: created {
    type: time
    timeframes: [raw, date, week, month, year, day_of_week]
    datatype: date
    sql: ${TABLE}.created_on ;;
  }

  measure: total_amount {
    type: sum
    sql: ${amount} ;;
  }

  measure: completed_amount {
    type: sum
    sql: ${amount} ;;
    filters: [status: "completed"]
  }

  measure: not_cancelled_count {
    type: count
    filters: [status: "-cancelled"]
  }

  measure: big_count {
    type: count
    filters: [is_big: "Yes", amount: ">=150"]
  }

  measure: average_amount {
    type: average
    sql: ${amount} ;;
  }

  measure: median_amount {
    type: median
    sql: ${amount} ;;
  }

  measure: amount_per_order {
    type: number
    sql: ${total_amount} / NULLIF(${count}, 0) ;;
  }

  measure: running_amount {
    type: running_total
    sql: ${total_amount} ;;
  }

  measure: paid_share {
    type: number
    sql: ${payments.total_paid} / NULLIF(${total_amount}, 0) ;;
  }

  measure: last_order_date {
    type: date
    sql: MAX(${created_raw}) ;;
  }
}

view: +orders {
  dimension: status {
    label: "Order status"
    description: "completed, cancelled or returned"
  }
}
